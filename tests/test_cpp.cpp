// SPDX-License-Identifier: MIT
// test_cpp.cpp - the public header compiles as C++ (extern "C", explicit
// casts in the inline code) and works from C++.
#include "bufwriter.h"

#include <criterion/criterion.h>
#include <cstdio>
#include <cstring>

Test(cpp, header_works_from_cpp)
{
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_put_u16be(&w, 0x0102), BW_OK);
    cr_assert_eq(bw_put_uvarint(&w, 300), BW_OK);
    cr_assert_eq(bw_printf(&w, "%s", "c++"), BW_OK);
    cr_assert_eq(bw_write(&w, "!", 1), BW_OK);
    static const unsigned char want[] = {1, 2, 0xac, 0x02, 'c', '+', '+', '!'};
    cr_assert_eq(bw_len(&w), sizeof want);
    cr_assert(std::memcmp(bw_data(&w), want, sizeof want) == 0);
    bw_release(&w);
}

// BW_VERSION_NUMBER is usable in #if and agrees with the other macros and
// with the library actually linked.
#if !defined(BW_VERSION_NUMBER) || BW_VERSION_NUMBER < 300 || \
    BW_VERSION_NUMBER != BW_VERSION_MAJOR * 10000 + BW_VERSION_MINOR * 100 + BW_VERSION_PATCH
#  error "BW_VERSION_NUMBER is missing or wrong"
#endif

Test(cpp, version_number_matches_the_linked_library)
{
    unsigned major = 0, minor = 0, patch = 0;
    cr_assert_eq(std::sscanf(bw_version(), "%u.%u.%u", &major, &minor, &patch), 3);
    cr_assert_eq(static_cast<long>(major * 10000 + minor * 100 + patch), BW_VERSION_NUMBER);
    char s[32];
    std::snprintf(s, sizeof s, "%d.%d.%d", BW_VERSION_MAJOR, BW_VERSION_MINOR, BW_VERSION_PATCH);
    cr_assert_str_eq(s, BW_VERSION_STRING);
}
