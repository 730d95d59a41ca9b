// SPDX-License-Identifier: MIT
// view() may pull a segmented writer's blocks into one, so it is not
// available on a const writer (data() and len() are).
// expect: (discards qualifiers|not marked const)
#include "bufwriter.hpp"

static size_t held(const bw::writer &w) {
#ifdef BW_FAIL
    return w.view()->size();
#else
    return w.len();
#endif
}

int main() {
    bw::writer w;
    w.write("abc");
    return held(w) == 3 ? 0 : 1;
}
