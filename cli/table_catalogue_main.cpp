// Build tool: writes a C++ source that registers the schema of every table the experiments
// register (all but storage's own), for the `linsweep` executable, which links no experiment
// but must know every table for `query` and `status`. The experiment files stay the one place
// a table is declared. Usage: linsweep_table_catalogue OUTPUT.cpp
#include <cstdio>
#include <fstream>
#include <string>

#include "storage/table.hpp"
#include "storage/units_table.hpp"

namespace {

const char* type_name(linsweep::ColumnType type) {
  switch (type) {
    case linsweep::ColumnType::kInt:
      return "ColumnType::kInt";
    case linsweep::ColumnType::kFloat:
      return "ColumnType::kFloat";
    case linsweep::ColumnType::kString:
      return "ColumnType::kString";
  }
  return "ColumnType::kString";
}

// A raw string literal of `s` (table and column docs hold quotes and parentheses).
std::string literal(const std::string& s) { return "R\"lsdoc(" + s + ")lsdoc\""; }

std::string catalogue_source() {
  std::string out =
      "// Generated at build time by linsweep_table_catalogue (cli/table_catalogue_main.cpp)\n"
      "// from the tables the experiments register.\n"
      "#include \"storage/table.hpp\"\n\nnamespace linsweep {\nnamespace {\n\n";
  int index = 0;
  for (const linsweep::Table& t : linsweep::table_schemas()) {
    if (t.name == linsweep::units_table().schema().name) continue;  // storage registers it
    out += "const TableRegistrar kTable" + std::to_string(index++) + "{Table{" + literal(t.name) + ", {\n";
    for (const linsweep::Column& c : t.columns)
      out += "    {" + literal(c.name) + ", " + type_name(c.type) + ", " + (c.required ? "true" : "false") + ", " +
             (c.key ? "true" : "false") + ", " + literal(c.doc) + "},\n";
    out += "}, {}, " + literal(t.doc) + "}};\n";
  }
  return out + "\n}  // namespace\n}  // namespace linsweep\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: linsweep_table_catalogue OUTPUT.cpp\n");
    return 2;
  }
  const std::string text = catalogue_source();
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "linsweep_table_catalogue: %s: cannot write\n", argv[1]);
    return 1;
  }
  return 0;
}
