// The `linsweep` executable: the light commands without LibTorch, linsweep-full for the rest.
#include "cli/commands/commands.hpp"

int main(int argc, char** argv) { return linsweep::linsweep_front_main(argc, argv); }
