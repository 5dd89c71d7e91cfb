"""``pixelworks/cimg`` (C image filters, with a generated font table and a poor-quality legacy
file) and ``pixelworks/geom`` (C++ geometry, vendoring cimg's ``util.h``)."""

from __future__ import annotations

import random

IMAGE_H = '''#ifndef CIMG_IMAGE_H
#define CIMG_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* An 8-bit RGBA image stored row by row. */
typedef struct {
    int width;
    int height;
    uint8_t *pixels; /* width * height * 4 bytes */
} cimg_image;

/* Allocate a zeroed image; returns NULL on bad size or out of memory. */
cimg_image *cimg_create(int width, int height);

/* Free an image created by cimg_create or cimg_load_ppm. NULL is allowed. */
void cimg_free(cimg_image *img);

/* Deep copy. */
cimg_image *cimg_clone(const cimg_image *img);

/* Pointer to the pixel at (x, y); no bounds check. */
static inline uint8_t *cimg_at(const cimg_image *img, int x, int y) {
    return img->pixels + ((size_t)y * (size_t)img->width + (size_t)x) * 4;
}

#endif /* CIMG_IMAGE_H */
'''

UTIL_H = '''#ifndef CIMG_UTIL_H
#define CIMG_UTIL_H

#include <stdint.h>

/* Clamp an int to the 0..255 range of a colour channel. */
static inline uint8_t clamp_u8(int v) {
    return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

/* Integer minimum and maximum. */
static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/* Clamp a coordinate into [0, n - 1], used for edge handling in convolutions. */
static inline int clamp_index(int i, int n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

#endif /* CIMG_UTIL_H */
'''

IMAGE_C = '''#include <stdlib.h>
#include <string.h>

#include "cimg/image.h"

cimg_image *cimg_create(int width, int height) {
    if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
        return NULL;
    }
    cimg_image *img = malloc(sizeof *img);
    if (img == NULL) {
        return NULL;
    }
    img->pixels = calloc((size_t)width * (size_t)height, 4);
    if (img->pixels == NULL) {
        free(img);
        return NULL;
    }
    img->width = width;
    img->height = height;
    return img;
}

void cimg_free(cimg_image *img) {
    if (img != NULL) {
        free(img->pixels);
        free(img);
    }
}

cimg_image *cimg_clone(const cimg_image *img) {
    cimg_image *copy = cimg_create(img->width, img->height);
    if (copy != NULL) {
        memcpy(copy->pixels, img->pixels, (size_t)img->width * (size_t)img->height * 4);
    }
    return copy;
}
'''

IO_C = '''#include <stdio.h>
#include <stdlib.h>

#include "cimg/image.h"
#include "cimg/io.h"

/* Read a binary PPM (P6, maxval 255). Alpha is set to opaque. */
cimg_image *cimg_load_ppm(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    int w, h, maxval;
    if (fscanf(f, "P6 %d %d %d", &w, &h, &maxval) != 3 || maxval != 255 || fgetc(f) == EOF) {
        fclose(f);
        return NULL;
    }
    cimg_image *img = cimg_create(w, h);
    for (int y = 0; img != NULL && y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint8_t *p = cimg_at(img, x, y);
            if (fread(p, 1, 3, f) != 3) {
                cimg_free(img);
                img = NULL;
                break;
            }
            p[3] = 255;
        }
    }
    fclose(f);
    return img;
}

int cimg_save_ppm(const cimg_image *img, const char *path) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    fprintf(f, "P6\\n%d %d\\n255\\n", img->width, img->height);
    for (int y = 0; y < img->height; y++) {
        for (int x = 0; x < img->width; x++) {
            fwrite(cimg_at(img, x, y), 1, 3, f);
        }
    }
    return fclose(f) == 0 ? 0 : -1;
}
'''

# (name, doc, per-pixel body using r, g, b and an int parameter `amount`)
FILTERS = [
    ("invert", "Invert each colour channel.", "r = 255 - r; g = 255 - g; b = 255 - b;"),
    ("grayscale", "Luma-weighted grey (ITU-R BT.601).", "int y = (299 * r + 587 * g + 114 * b) / 1000; r = g = b = y;"),
    ("sepia", "Classic sepia tone.", "int nr = (393 * r + 769 * g + 189 * b) / 1000; int ng = (349 * r + 686 * g + 168 * b) / 1000;\n            int nb = (272 * r + 534 * g + 131 * b) / 1000; r = nr; g = ng; b = nb;"),
    ("brightness", "Add `amount` to every channel.", "r += amount; g += amount; b += amount;"),
    ("contrast", "Scale distance from mid-grey by amount/100.", "r = 128 + (r - 128) * amount / 100; g = 128 + (g - 128) * amount / 100; b = 128 + (b - 128) * amount / 100;"),
    ("threshold", "Black or white depending on luma versus `amount`.", "int y = (299 * r + 587 * g + 114 * b) / 1000; r = g = b = (y >= amount) ? 255 : 0;"),
    ("posterize", "Reduce each channel to `amount` levels.", "int step = 255 / imax(1, amount - 1); r = (r + step / 2) / step * step; g = (g + step / 2) / step * step; b = (b + step / 2) / step * step;"),
    ("solarize", "Invert channels above `amount`.", "if (r > amount) r = 255 - r; if (g > amount) g = 255 - g; if (b > amount) b = 255 - b;"),
    ("channel_swap", "Swap red and blue.", "int t = r; r = b; b = t;"),
    ("tint_red", "Add `amount` to the red channel only.", "r += amount;"),
    ("tint_blue", "Add `amount` to the blue channel only.", "b += amount;"),
    ("gamma_approx", "Cheap gamma: square the normalised value when amount is 2.", "if (amount == 2) { r = r * r / 255; g = g * g / 255; b = b * b / 255; }"),
]

BLUR_C = '''#include <stdlib.h>

#include "cimg/filters.h"
#include "cimg/util.h"

/* Box blur with the given radius, separable: horizontal pass then vertical pass. */
int cimg_box_blur(cimg_image *img, int radius) {
    if (radius <= 0) {
        return 0;
    }
    cimg_image *tmp = cimg_clone(img);
    if (tmp == NULL) {
        return -1;
    }
    const int span = 2 * radius + 1;
    for (int y = 0; y < img->height; y++) {
        for (int x = 0; x < img->width; x++) {
            int sum[3] = {0, 0, 0};
            for (int k = -radius; k <= radius; k++) {
                const uint8_t *p = cimg_at(img, clamp_index(x + k, img->width), y);
                sum[0] += p[0];
                sum[1] += p[1];
                sum[2] += p[2];
            }
            uint8_t *q = cimg_at(tmp, x, y);
            for (int c = 0; c < 3; c++) {
                q[c] = (uint8_t)(sum[c] / span);
            }
        }
    }
    for (int y = 0; y < img->height; y++) {
        for (int x = 0; x < img->width; x++) {
            int sum[3] = {0, 0, 0};
            for (int k = -radius; k <= radius; k++) {
                const uint8_t *p = cimg_at(tmp, x, clamp_index(y + k, img->height));
                sum[0] += p[0];
                sum[1] += p[1];
                sum[2] += p[2];
            }
            uint8_t *q = cimg_at(img, x, y);
            for (int c = 0; c < 3; c++) {
                q[c] = (uint8_t)(sum[c] / span);
            }
        }
    }
    cimg_free(tmp);
    return 0;
}
'''

LEGACY_C = '''#include <stdlib.h>
#include "cimg/image.h"
cimg_image *rs(cimg_image *a,int w,int h){
int i,j,k,x,y;cimg_image *b=cimg_create(w,h);
if(b){for(i=0;i<h;i++){for(j=0;j<w;j++){x=j*a->width/w;y=i*a->height/h;
if(x<a->width){if(y<a->height){for(k=0;k<4;k++){if(k<3){b->pixels[(i*w+j)*4+k]=a->pixels[(y*a->width+x)*4+k];}else{b->pixels[(i*w+j)*4+k]=255;}}}}}}}
return b;}
cimg_image *rs2(cimg_image *a,int w,int h){
int i,j,k,x,y;cimg_image *b=cimg_create(w,h);
if(b){for(i=0;i<h;i++){for(j=0;j<w;j++){x=j*a->width/w;y=i*a->height/h;
if(x<a->width){if(y<a->height){for(k=0;k<4;k++){if(k<3){b->pixels[(i*w+j)*4+k]=a->pixels[(y*a->width+x)*4+k];}else{b->pixels[(i*w+j)*4+k]=a->pixels[(y*a->width+x)*4+3];}}}}}}}
return b;}
'''


def filter_c(name: str, doc: str, body: str) -> str:
    return f'''#include "cimg/filters.h"
#include "cimg/util.h"

/* {doc} */
void cimg_{name}(cimg_image *img, int amount) {{
    (void)amount;
    for (int y = 0; y < img->height; y++) {{
        for (int x = 0; x < img->width; x++) {{
            uint8_t *p = cimg_at(img, x, y);
            int r = p[0], g = p[1], b = p[2];
            {body}
            p[0] = clamp_u8(r);
            p[1] = clamp_u8(g);
            p[2] = clamp_u8(b);
        }}
    }}
}}
'''


def font_data(rng: random.Random) -> str:
    rows = []
    for ch in range(32, 127):
        glyph = ", ".join(f"0x{rng.getrandbits(8):02x}" for _ in range(16))
        rows.append(f"    /* 0x{ch:02x} {chr(ch)!r} */ {{{glyph}}},")
    return ("/* Auto-generated by tools/bdf2c.py from fonts/terminus-8x16.bdf. DO NOT EDIT. */\n\n#include <stdint.h>\n\n"
            "const uint8_t cimg_font_8x16[95][16] = {\n" + "\n".join(rows) + "\n};\n")


def cimg(rng: random.Random) -> list[tuple[str, str]]:
    decls = "\n".join(f"/* {doc} */\nvoid cimg_{name}(cimg_image *img, int amount);\n" for name, doc, _ in FILTERS)
    files = [
        ("README.md", "# cimg\n\nA dependency-free C99 library of simple image filters on RGBA buffers, with PPM "
                      "input and output.\n\n```\nmake && make test\n./build/cimg-cli invert in.ppm out.ppm\n```\n\n"
                      "Filters: " + ", ".join(f"`{n}`" for n, _, _ in FILTERS) + ", and `box_blur`.\n"),
        ("Makefile", "CC ?= cc\nCFLAGS ?= -std=c99 -O2 -Wall -Wextra -Iinclude\nSRC := $(wildcard src/*.c src/filters/*.c)\n"
                     "OBJ := $(SRC:%.c=build/%.o)\n\nall: build/libcimg.a\n\nbuild/%.o: %.c\n\t@mkdir -p $(dir $@)\n\t$(CC) $(CFLAGS) -c $< -o $@\n\n"
                     "build/libcimg.a: $(OBJ)\n\tar rcs $@ $^\n\ntest: build/libcimg.a\n\t$(CC) $(CFLAGS) tests/*.c build/libcimg.a -o build/tests && ./build/tests\n\n"
                     "clean:\n\trm -rf build\n"),
        ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(cimg C)\nset(CMAKE_C_STANDARD 99)\n"
                           "file(GLOB SRC src/*.c src/filters/*.c)\nadd_library(cimg STATIC ${SRC})\n"
                           "target_include_directories(cimg PUBLIC include)\nenable_testing()\n"
                           "add_executable(cimg_tests tests/test_main.c tests/test_filters.c)\ntarget_link_libraries(cimg_tests cimg)\n"
                           "add_test(NAME cimg_tests COMMAND cimg_tests)\n"),
        ("include/cimg/image.h", IMAGE_H),
        ("include/cimg/util.h", UTIL_H),
        ("include/cimg/io.h", '#ifndef CIMG_IO_H\n#define CIMG_IO_H\n\n#include "cimg/image.h"\n\n'
                              "/* Load a binary PPM (P6); NULL on error. */\ncimg_image *cimg_load_ppm(const char *path);\n\n"
                              "/* Save as binary PPM; 0 on success, -1 on error. */\nint cimg_save_ppm(const cimg_image *img, const char *path);\n\n#endif\n"),
        ("include/cimg/filters.h", '#ifndef CIMG_FILTERS_H\n#define CIMG_FILTERS_H\n\n#include "cimg/image.h"\n\n' + decls
                                   + "\n/* Separable box blur; 0 on success, -1 when out of memory. */\nint cimg_box_blur(cimg_image *img, int radius);\n\n#endif\n"),
        ("src/image.c", IMAGE_C),
        ("src/io.c", IO_C),
        ("src/font_data.c", font_data(rng)),
        ("src/filters/blur.c", BLUR_C),
        ("src/legacy/old_resize.c", LEGACY_C),
        ("tests/test_main.c", '#include <stdio.h>\n\nint test_filters(void);\n\nint main(void) {\n    int failed = test_filters();\n'
                              '    printf("%s\\n", failed ? "FAILED" : "ok");\n    return failed ? 1 : 0;\n}\n'),
        ("tests/test_filters.c", '#include <stdio.h>\n\n#include "cimg/filters.h"\n\n#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__, #cond); failed++; } } while (0)\n\n'
                                 "int test_filters(void) {\n    int failed = 0;\n    cimg_image *img = cimg_create(2, 2);\n    CHECK(img != NULL);\n"
                                 "    cimg_at(img, 0, 0)[0] = 10;\n    cimg_invert(img, 0);\n    CHECK(cimg_at(img, 0, 0)[0] == 245);\n"
                                 "    cimg_brightness(img, 20);\n    CHECK(cimg_at(img, 0, 0)[0] == 255);\n    CHECK(cimg_box_blur(img, 1) == 0);\n"
                                 "    cimg_free(img);\n    CHECK(cimg_create(0, 5) == NULL);\n    return failed;\n}\n"),
        ("tools/cimg-cli.c", '#include <stdio.h>\n#include <string.h>\n\n#include "cimg/filters.h"\n#include "cimg/io.h"\n\n'
                             "int main(int argc, char **argv) {\n    if (argc != 4) {\n        fprintf(stderr, \"usage: %s FILTER IN.ppm OUT.ppm\\n\", argv[0]);\n        return 2;\n    }\n"
                             "    cimg_image *img = cimg_load_ppm(argv[2]);\n    if (img == NULL) {\n        perror(argv[2]);\n        return 1;\n    }\n"
                             + "".join(f'    {"if" if i == 0 else "else if"} (strcmp(argv[1], "{n}") == 0) cimg_{n}(img, 30);\n' for i, (n, _, _) in enumerate(FILTERS))
                             + '    else {\n        fprintf(stderr, "unknown filter %s\\n", argv[1]);\n        cimg_free(img);\n        return 2;\n    }\n'
                             "    int rc = cimg_save_ppm(img, argv[3]);\n    cimg_free(img);\n    return rc == 0 ? 0 : 1;\n}\n"),
    ]
    for name, doc, body in FILTERS:
        files.append((f"src/filters/{name}.c", filter_c(name, doc, body)))
    return files


# --------------------------------------------------------------------------------------------- C++

VEC2 = '''#pragma once

#include <cmath>
#include <ostream>

namespace geom {

/// A 2-D vector of doubles with the usual arithmetic.
struct Vec2 {
    double x = 0.0;
    double y = 0.0;

    constexpr Vec2 operator+(Vec2 o) const { return {x + o.x, y + o.y}; }
    constexpr Vec2 operator-(Vec2 o) const { return {x - o.x, y - o.y}; }
    constexpr Vec2 operator*(double s) const { return {x * s, y * s}; }
    constexpr bool operator==(const Vec2&) const = default;

    [[nodiscard]] constexpr double dot(Vec2 o) const { return x * o.x + y * o.y; }
    /// z-component of the 3-D cross product; > 0 when `o` is counter-clockwise from this.
    [[nodiscard]] constexpr double cross(Vec2 o) const { return x * o.y - y * o.x; }
    [[nodiscard]] double norm() const { return std::hypot(x, y); }
};

inline std::ostream& operator<<(std::ostream& os, Vec2 v) { return os << '(' << v.x << ", " << v.y << ')'; }

}  // namespace geom
'''

POLYGON_HPP = '''#pragma once

#include <vector>

#include "geom/vec2.hpp"

namespace geom {

using Polygon = std::vector<Vec2>;

/// Signed area by the shoelace formula; positive for counter-clockwise vertex order.
double signed_area(const Polygon& poly);

/// Convex hull (Andrew's monotone chain), counter-clockwise, without collinear points.
Polygon convex_hull(Polygon points);

/// Whether `p` lies inside `poly` (even-odd rule; points on the boundary count as inside).
bool contains(const Polygon& poly, Vec2 p);

}  // namespace geom
'''

POLYGON_CPP = '''#include "geom/polygon.hpp"

#include <algorithm>

namespace geom {

double signed_area(const Polygon& poly) {
    double twice = 0.0;
    for (std::size_t i = 0, n = poly.size(); i < n; ++i) {
        twice += poly[i].cross(poly[(i + 1) % n]);
    }
    return twice / 2.0;
}

Polygon convex_hull(Polygon pts) {
    std::sort(pts.begin(), pts.end(), [](Vec2 a, Vec2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    if (pts.size() < 3) {
        return pts;
    }
    Polygon hull(2 * pts.size());
    std::size_t k = 0;
    auto turn = [&](Vec2 c) { return (hull[k - 1] - hull[k - 2]).cross(c - hull[k - 2]); };
    for (Vec2 p : pts) {
        while (k >= 2 && turn(p) <= 0) --k;
        hull[k++] = p;
    }
    for (std::size_t i = pts.size() - 1, lower = k + 1; i-- > 0;) {
        while (k >= lower && turn(pts[i]) <= 0) --k;
        hull[k++] = pts[i];
    }
    hull.resize(k - 1);
    return hull;
}

bool contains(const Polygon& poly, Vec2 p) {
    bool inside = false;
    for (std::size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
        const Vec2 a = poly[i], b = poly[j];
        if ((b - a).cross(p - a) == 0.0 && (p - a).dot(p - b) <= 0.0) {
            return true;  // on an edge
        }
        if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) {
            inside = !inside;
        }
    }
    return inside;
}

}  // namespace geom
'''

SHAPES = [("Circle", "double r", "3.141592653589793 * r * r", "2 * 3.141592653589793 * r", "2.0"),
          ("Rect", "double w, double h", "w * h", "2 * (w + h)", "2.0, 3.0"),
          ("Square", "double s", "s * s", "4 * s", "2.0"),
          ("Ellipse", "double a, double b", "3.141592653589793 * a * b",
           "3.141592653589793 * (3 * (a + b) - std::sqrt((3 * a + b) * (a + 3 * b)))", "2.0, 1.0"),
          ("RightTriangle", "double a, double b", "0.5 * a * b", "a + b + std::hypot(a, b)", "3.0, 4.0"),
          ("RegularHexagon", "double s", "1.5 * std::sqrt(3.0) * s * s", "6 * s", "1.0")]


def shape_hpp(name: str, params: str, area: str, perim: str) -> str:
    fields = "\n".join(f"    {p.strip()} = 0.0;" for p in params.split(","))
    return f'''#pragma once

#include <cmath>

namespace geom {{

/// {name} described by its dimensions.
struct {name} {{
{fields}

    [[nodiscard]] double area() const {{ return {area}; }}
    [[nodiscard]] double perimeter() const {{ return {perim}; }}
}};

}}  // namespace geom
'''


def shape_test(name: str, args: str) -> str:
    return f'''#include <cassert>
#include <cmath>

#include "geom/shapes/{name.lower()}.hpp"

int main() {{
    const geom::{name} s{{{args}}};
    assert(s.area() > 0.0);
    assert(s.perimeter() > 0.0);
    // the isoperimetric inequality holds for every plane shape
    assert(4 * 3.141592653589793 * s.area() <= s.perimeter() * s.perimeter() + 1e-9);
    return 0;
}}
'''


def geom(rng: random.Random) -> list[tuple[str, str]]:
    files = [
        ("README.md", "# geom\n\nHeader-mostly C++20 computational geometry: vectors, polygons, convex hulls, "
                      "point-in-polygon and simple shapes.\n\n```\ncmake -B build && cmake --build build && ctest --test-dir build\n```\n\n"
                      "`third_party/cimg/util.h` is vendored from pixelworks/cimg for the raster helpers.\n"),
        ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(geom CXX)\nset(CMAKE_CXX_STANDARD 20)\n"
                           "add_library(geom src/polygon.cpp)\ntarget_include_directories(geom PUBLIC include third_party)\n"
                           "enable_testing()\nfile(GLOB TESTS tests/*.cpp)\nforeach(t ${TESTS})\n  get_filename_component(n ${t} NAME_WE)\n"
                           "  add_executable(${n} ${t})\n  target_link_libraries(${n} geom)\n  add_test(NAME ${n} COMMAND ${n})\nendforeach()\n"),
        ("include/geom/vec2.hpp", VEC2),
        ("include/geom/polygon.hpp", POLYGON_HPP),
        ("src/polygon.cpp", POLYGON_CPP),
        ("third_party/cimg/util.h", UTIL_H),
        ("tests/test_polygon.cpp", '#include <cassert>\n\n#include "geom/polygon.hpp"\n\nint main() {\n'
                                   "    using geom::Vec2;\n    const geom::Polygon square{{0, 0}, {2, 0}, {2, 2}, {0, 2}};\n"
                                   "    assert(geom::signed_area(square) == 4.0);\n    assert(geom::contains(square, Vec2{1, 1}));\n"
                                   "    assert(!geom::contains(square, Vec2{3, 1}));\n"
                                   "    const auto hull = geom::convex_hull({{0, 0}, {1, 1}, {2, 0}, {2, 2}, {0, 2}, {1, 0}});\n"
                                   "    assert(hull.size() == 4);\n    return 0;\n}\n"),
        ("tests/test_vec2.cpp", '#include <cassert>\n\n#include "geom/vec2.hpp"\n\nint main() {\n    constexpr geom::Vec2 a{1, 0}, b{0, 1};\n'
                                "    static_assert(a.cross(b) == 1.0);\n    static_assert(a.dot(b) == 0.0);\n    assert((a + b).norm() > 1.41);\n    return 0;\n}\n"),
        ("examples/hull.cpp", '#include <iostream>\n#include <random>\n\n#include "geom/polygon.hpp"\n\nint main() {\n'
                              "    std::mt19937 gen(42);\n    std::uniform_real_distribution<double> d(-1.0, 1.0);\n    geom::Polygon pts;\n"
                              "    for (int i = 0; i < 1000; ++i) pts.push_back({d(gen), d(gen)});\n    const auto hull = geom::convex_hull(pts);\n"
                              '    std::cout << hull.size() << " hull points, area " << geom::signed_area(hull) << "\\n";\n}\n'),
    ]
    for name, params, area, perim, args in SHAPES:
        files.append((f"include/geom/shapes/{name.lower()}.hpp", shape_hpp(name, params, area, perim)))
        files.append((f"tests/test_{name.lower()}.cpp", shape_test(name, args)))
    return files
