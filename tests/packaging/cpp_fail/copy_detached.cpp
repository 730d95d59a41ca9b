// SPDX-License-Identifier: MIT
// A detached block has one owner, which gives it back: no copies.
// expect: (deleted|delete)
#include "bufwriter.hpp"

#include <utility>

int main() {
    bw::writer w;
    w.write("abc");
    bw::detached d = w.detach();
#ifdef BW_FAIL
    bw::detached e = d;
#else
    bw::detached e = std::move(d);
#endif
    return e.size() == 3 ? 0 : 1;
}
