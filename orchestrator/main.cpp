// The `linsweep` executable.
#include "orchestrator/commands/commands.hpp"

int main(int argc, char** argv) { return linsweep::linsweep_main(argc, argv); }
