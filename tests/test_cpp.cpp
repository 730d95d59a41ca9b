// test_cpp.cpp - the public header compiles as C++ (extern "C", explicit
// casts in the inline code) and works from C++.
#include "bufwriter.h"

#include <criterion/criterion.h>
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
