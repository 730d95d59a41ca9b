// SPDX-License-Identifier: MIT
// Below C++17 bufwriter.hpp stops with one clear message (run.sh compiles
// this at -std=c++14, where it must fail, and at -std=c++17).
// expect: bufwriter.hpp needs C\+\+17 or later
#include "bufwriter.hpp"

int main() {
    bw::writer w;
    return w.write("abc") == BW_OK ? 0 : 1;
}
