// The `linsweep-full` executable: every command (`linsweep` starts it for all but the light
// commands).
#include "cli/commands/commands.hpp"

int main(int argc, char** argv) { return linsweep::linsweep_main(argc, argv); }
