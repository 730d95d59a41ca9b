/* Seeded bug: read a writer's byte past bw_len(), inside its block (the
 * unused tail is poisoned as a container under ASan). */
#include "bufwriter.h"

#include <stdio.h>

int main(void)
{
    bw_writer w = BW_WRITER_INIT;
    bw_puts(&w, "abc");
    printf("%d\n", bw_data(&w)[bw_len(&w)]); /* the bug: byte 3 of a 16-byte block */
    bw_release(&w);
    return 0;
}
