#!/usr/bin/env python3
"""Checks a picture written by redist-plan --svg and its rendering.

The SVG must be well-formed SVG 1.1 with integer width and height and viewBox "0 0 W H";
optional counts of its elements are compared with expected values. rsvg-convert renders it to a
PNG, whose IHDR must give W x H; a second, small rendering is decoded (zlib and the PNG row
filters, no third-party module) to check that the image is not blank.
"""

import argparse
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"


def fail(message):
    print("check_plan_svg: " + message, file=sys.stderr)
    sys.exit(1)


def png_chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG file (bad signature)")
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def png_size(data):
    kind, body = next(png_chunks(data))
    if kind != b"IHDR":
        fail("the first PNG chunk is %r, not IHDR" % kind)
    return struct.unpack(">II", body[:8])


def png_pixels(data):
    """Rows of (r, g, b) tuples of an 8-bit RGB or RGBA PNG, composed on white."""
    ihdr = None
    idat = b""
    for kind, body in png_chunks(data):
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        fail("unexpected PNG format: depth %d, colour type %d, interlace %d"
             % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            elif kind != 0:
                fail("bad PNG filter type %d" % kind)
        previous = line
        pixels = []
        for x in range(width):
            px = line[x * bpp:(x + 1) * bpp]
            alpha = px[3] if bpp == 4 else 255
            pixels.append(tuple((v * alpha + 255 * (255 - alpha)) // 255 for v in px[:3]))
        rows.append(pixels)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rsvg", required=True, help="the rsvg-convert program")
    parser.add_argument("--pieces", type=int, help="expected schedule cells (class piece)")
    parser.add_argument("--steps", type=int, help="expected schedule rows (class step)")
    parser.add_argument("--max-elements", type=int, help="most elements the file may hold")
    parser.add_argument("--contains", action="append", default=[],
                        help="a text the picture must show (repeatable)")
    parser.add_argument("svg")
    parser.add_argument("png")
    args = parser.parse_args()

    try:
        root = ET.parse(args.svg).getroot()
    except ET.ParseError as e:
        fail("%s is not well-formed XML: %s" % (args.svg, e))
    if root.tag != SVG_NS + "svg" or root.get("version") != "1.1":
        fail("the root is %s version %s, not SVG 1.1" % (root.tag, root.get("version")))
    try:
        width, height = int(root.get("width")), int(root.get("height"))
    except (TypeError, ValueError):
        fail("width and height must be integers of pixels")
    if root.get("viewBox") != "0 0 %d %d" % (width, height):
        fail("viewBox %r does not match the size %d x %d" % (root.get("viewBox"), width, height))
    elements = list(root.iter())
    classes = [e.get("class") for e in elements]
    for name, expected in (("piece", args.pieces), ("step", args.steps)):
        if expected is not None and classes.count(name) != expected:
            fail("%d elements of class %s, expected %d" % (classes.count(name), name, expected))
    if args.max_elements is not None and len(elements) > args.max_elements:
        fail("%d elements, more than %d" % (len(elements), args.max_elements))
    text = "\n".join(e.text or "" for e in elements if e.tag == SVG_NS + "text")
    for wanted in args.contains:
        if wanted not in text:
            fail("the picture does not say %r" % wanted)

    subprocess.run([args.rsvg, "-o", args.png, args.svg], check=True)
    with open(args.png, "rb") as f:
        data = f.read()
    if png_size(data) != (width, height):
        fail("the PNG is %d x %d, the SVG declares %d x %d" % (png_size(data) + (width, height)))

    small = subprocess.run([args.rsvg, "--width", "320", "--keep-aspect-ratio", args.svg],
                           check=True, stdout=subprocess.PIPE).stdout
    pixels = [p for row in png_pixels(small) for p in row]
    colours = len(set(pixels))
    inked = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
    if colours < 16 or inked < 0.05:
        fail("the rendering looks blank: %d colours, %.1f%% of the pixels not white"
             % (colours, 100 * inked))
    print("%s: %d x %d, %d elements; rendered %s: %d bytes, %d colours, %.0f%% inked"
          % (args.svg, width, height, len(elements), args.png, len(data), colours, 100 * inked))


if __name__ == "__main__":
    main()
