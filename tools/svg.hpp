#pragma once
// A small SVG 1.1 writer for the tools' pictures: elements appended to a body, the document
// closed with explicit width, height and viewBox; colours for processes and heat maps; writing
// the file with the reason of a failure. No MPI, no dependency beyond the standard library.

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace redist::svg {

/// A coordinate or length: at most two decimals, no trailing zeros ("12", "3.5").
[[nodiscard]] std::string number(double v);
/// Text content or an attribute value with &, <, > and " escaped.
[[nodiscard]] std::string escape(std::string_view text);

struct Rgb {
  int r = 0;
  int g = 0;
  int b = 0;
};
/// "#rrggbb".
[[nodiscard]] std::string hex(Rgb c);
/// The colour of process `process` (>= 0): Kelly's 20 colours of maximum contrast for the
/// first twenty, then hues spaced by the golden angle at three lightnesses.
[[nodiscard]] Rgb process_colour(int process);
/// The viridis colour map reversed, t in [0, 1]: light yellow (0) to dark purple (1), so the
/// largest values stand out on a white page.
[[nodiscard]] Rgb heat_colour(double t);
/// "black" or "white", whichever reads better on `background`.
[[nodiscard]] const char *text_colour(Rgb background);

class Document {
public:
  /// attributes: extra attributes as written, e.g. R"(fill="#fff" class="piece")".
  void rect(double x, double y, double width, double height, std::string_view attributes);
  void line(double x1, double y1, double x2, double y2, std::string_view attributes);
  /// `content` is escaped.
  void text(double x, double y, std::string_view content, std::string_view attributes = {});
  /// A polyline or polygon through the points "x,y x,y ..." (built with point()).
  void poly(bool closed, std::string_view points, std::string_view attributes);
  /// An element written as given (defs, groups).
  void raw(std::string_view element);
  /// Elements written so far (the size budget of a picture).
  [[nodiscard]] std::size_t elements() const { return elements_; }
  /// The whole document, `width` x `height` pixels, with a white background.
  [[nodiscard]] std::string finish(int width, int height) const;

private:
  void shape(std::string_view tag, std::initializer_list<std::pair<const char *, double>> geometry,
             std::string_view attributes);

  std::string body_;
  std::size_t elements_ = 0;
};

/// "x,y " for Document::poly.
[[nodiscard]] std::string point(double x, double y);

/// Write `content` to `path`; an empty string on success, else the reason.
[[nodiscard]] std::string write_file(const std::string &path, const std::string &content);

} // namespace redist::svg
