#include "svg.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace redist::svg {

std::string number(double v) {
  const double rounded = std::round(v * 100.0) / 100.0;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", rounded == 0.0 ? 0.0 : rounded);
  std::string s = buffer;
  while (s.back() == '0') {
    s.pop_back();
  }
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string hex(Rgb c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r & 0xff, c.g & 0xff, c.b & 0xff);
  return buffer;
}

namespace {

Rgb from_hsl(double hue, double saturation, double lightness) {
  const double chroma = (1 - std::abs(2 * lightness - 1)) * saturation;
  const double h = hue / 60.0;
  const double x = chroma * (1 - std::abs(std::fmod(h, 2.0) - 1));
  double r = 0;
  double g = 0;
  double b = 0;
  if (h < 1) {
    r = chroma, g = x;
  } else if (h < 2) {
    r = x, g = chroma;
  } else if (h < 3) {
    g = chroma, b = x;
  } else if (h < 4) {
    g = x, b = chroma;
  } else if (h < 5) {
    r = x, b = chroma;
  } else {
    r = chroma, b = x;
  }
  const double m = lightness - chroma / 2;
  const auto byte = [m](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return {byte(r), byte(g), byte(b)};
}

} // namespace

Rgb process_colour(int process) {
  // K. L. Kelly, "Twenty-two colors of maximum contrast" (1965), without white and black.
  static constexpr std::array<Rgb, 20> kelly{
      {{0xf3, 0xc3, 0x00}, {0x87, 0x56, 0x92}, {0xf3, 0x84, 0x00}, {0xa1, 0xca, 0xf1},
       {0xbe, 0x00, 0x32}, {0xc2, 0xb2, 0x80}, {0x84, 0x84, 0x82}, {0x00, 0x88, 0x56},
       {0xe6, 0x8f, 0xac}, {0x00, 0x67, 0xa5}, {0xf9, 0x93, 0x79}, {0x60, 0x4e, 0x97},
       {0xf6, 0xa6, 0x00}, {0xb3, 0x44, 0x6c}, {0xdc, 0xd3, 0x00}, {0x88, 0x2d, 0x17},
       {0x8d, 0xb6, 0x00}, {0x65, 0x45, 0x22}, {0xe2, 0x58, 0x22}, {0x2b, 0x3d, 0x26}}};
  if (process >= 0 && process < static_cast<int>(kelly.size())) {
    return kelly[static_cast<std::size_t>(process)];
  }
  constexpr std::array<double, 3> lightness{0.45, 0.62, 0.78};
  const double hue = std::fmod(static_cast<double>(process) * 137.50776405, 360.0);
  return from_hsl(hue, 0.65, lightness[static_cast<std::size_t>(process) % lightness.size()]);
}

Rgb heat_colour(double t) {
  // viridis (matplotlib) sampled at nine points, from t = 1 down to t = 0.
  static constexpr std::array<Rgb, 9> viridis{{{0x44, 0x01, 0x54},
                                               {0x47, 0x2d, 0x7b},
                                               {0x3b, 0x52, 0x8b},
                                               {0x2c, 0x72, 0x8e},
                                               {0x21, 0x91, 0x8c},
                                               {0x28, 0xae, 0x80},
                                               {0x5e, 0xc9, 0x62},
                                               {0xad, 0xdc, 0x30},
                                               {0xfd, 0xe7, 0x25}}};
  const double u = (1.0 - std::clamp(t, 0.0, 1.0)) * static_cast<double>(viridis.size() - 1);
  const auto k = std::min(static_cast<std::size_t>(u), viridis.size() - 2);
  const double f = u - static_cast<double>(k);
  const auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  const Rgb &a = viridis[k];
  const Rgb &b = viridis[k + 1];
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

const char *text_colour(Rgb background) {
  const double luma = 0.299 * background.r + 0.587 * background.g + 0.114 * background.b;
  return luma > 140 ? "black" : "white";
}

void Document::shape(std::string_view tag,
                     std::initializer_list<std::pair<const char *, double>> geometry,
                     std::string_view attributes) {
  body_ += '<';
  body_ += tag;
  for (const auto &[name, value] : geometry) {
    body_ += ' ';
    body_ += name;
    body_ += "=\"" + number(value) + '"';
  }
  body_ += ' ';
  body_ += attributes;
  body_ += "/>\n";
  ++elements_;
}

void Document::rect(double x, double y, double width, double height, std::string_view attributes) {
  shape("rect", {{"x", x}, {"y", y}, {"width", width}, {"height", height}}, attributes);
}

void Document::line(double x1, double y1, double x2, double y2, std::string_view attributes) {
  shape("line", {{"x1", x1}, {"y1", y1}, {"x2", x2}, {"y2", y2}}, attributes);
}

void Document::text(double x, double y, std::string_view content, std::string_view attributes) {
  body_ += "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\"";
  if (!attributes.empty()) {
    body_ += ' ';
    body_ += attributes;
  }
  body_ += '>' + escape(content) + "</text>\n";
  ++elements_;
}

void Document::poly(bool closed, std::string_view points, std::string_view attributes) {
  body_ += closed ? "<polygon points=\"" : "<polyline points=\"";
  body_ += points;
  body_ += "\" ";
  body_ += attributes;
  body_ += "/>\n";
  ++elements_;
}

void Document::raw(std::string_view element) {
  body_ += element;
  body_ += '\n';
  ++elements_;
}

std::string Document::finish(int width, int height) const {
  const std::string w = std::to_string(width);
  const std::string h = std::to_string(height);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
         "<rect width=\"" +
         w + "\" height=\"" + h + "\" fill=\"white\"/>\n" + body_ + "</svg>\n";
}

std::string point(double x, double y) {
  return number(x) + "," + number(y) + " ";
}

std::string write_file(const std::string &path, const std::string &content) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    return std::string("cannot open the file for writing (") +
           (errno != 0 ? std::strerror(errno) : "unknown reason") + ")";
  }
  out << content;
  out.close();
  if (!out) return "cannot write the file (disk full?)";
  return {};
}

} // namespace redist::svg
