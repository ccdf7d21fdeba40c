// Text in SVG figures: escaping, a conservative width estimate (the writer has no font
// metrics), and number formats for ticks and data attributes.
#pragma once

#include <string>

namespace linsweep {

// Escapes &, <, >, " for SVG and HTML text and attribute values.
std::string xml_escape(const std::string& s);

// Width in pixels that `s` (UTF-8) takes at `font_size` in a sans-serif font, over-estimated
// so that a box sized by it holds the text: 0.62 em per code point, the average advance of
// wide sans-serif fonts (DejaVu Sans, Arial's digits and capitals) rather than of narrow ones.
double text_width(const std::string& s, double font_size);

// A tick label: "%g" on linear axes; on a log axis 1, 10, 100, 1k, 10k, …, 1M, 1B.
std::string tick_text(double v, bool log_axis);

// The shortest text that reads back as exactly `v` ("nan" and "inf" for those), for the data
// attributes tests and readers parse.
std::string exact_text(double v);

}  // namespace linsweep
