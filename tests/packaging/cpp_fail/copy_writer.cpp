// SPDX-License-Identifier: MIT
// A writer owns its blocks: no copies (move it).
// expect: (deleted|delete)
#include "bufwriter.hpp"

#include <utility>

int main() {
    bw::writer w;
    w.write("abc");
#ifdef BW_FAIL
    bw::writer c = w;
#else
    bw::writer c = std::move(w);
#endif
    return c.len() == 3 ? 0 : 1;
}
