/* SPDX-License-Identifier: MIT */
/* records.c - stream length-prefixed records to a file, with back-patched
 * lengths, in bounded memory.
 *
 * Each record is a u32le length (of what follows), then a u16le record
 * number, then a text line. The writer streams to the file through a 4 KiB
 * buffer: when it fills, its bytes go to the file and it is reused, so the
 * program's memory does not grow with the file. A length is back-patched
 * by position (bw_tell), which works while the record's bytes are still
 * held: bw_reserve makes room for a whole record first (sending older
 * records if needed), so nothing of the record is sent before its patch.
 * Then the program reads the file back and checks every length.
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/records.c -pthread -o records
 * or against the installed library:
 *   cc -std=c11 examples/records.c $(pkg-config --cflags --libs bufwriter) -o records
 *
 * Run:  ./records records.bin
 */
#define _POSIX_C_SOURCE 200809L /* open */

#include "bufwriter.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Windows opens descriptors in text mode ('\n' written as "\r\n"): a
 * binary file needs O_BINARY there. */
#ifndef O_BINARY
#  define O_BINARY 0
#endif

#define RECORDS 1000
#define MAX_RECORD 256 /* an upper bound on one record's bytes */

/* Read the file back: every length must match the record it prefixes. */
static int check(const char *path, unsigned long *bytes)
{
    unsigned char len4[4], *rec = malloc(MAX_RECORD);
    unsigned long n = 0;
    int records = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL || rec == NULL) {
        if (f != NULL) fclose(f);
        free(rec);
        return -1;
    }
    while (fread(len4, 1, 4, f) == 4) {
        unsigned long len = len4[0] | (unsigned long)len4[1] << 8 |
                            (unsigned long)len4[2] << 16 | (unsigned long)len4[3] << 24;
        if (len < 2 || len > MAX_RECORD || fread(rec, 1, len, f) != len) break;
        if ((rec[0] | rec[1] << 8) != records) break;
        records++;
        n += 4 + len;
    }
    fclose(f);
    free(rec);
    *bytes = n;
    return records;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "records.bin";
    unsigned long bytes = 0;
    bw_writer w;
    int fd, i, rc;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_BINARY, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    bw_init_fd(&w, NULL, 4096, fd);    /* streaming: bounded memory */
    for (i = 0; i < RECORDS; i++) {
        uint64_t at;
        bw_reserve(&w, MAX_RECORD);    /* the whole record stays held */
        at = bw_tell(&w);
        bw_put_u32le(&w, 0);           /* length placeholder */
        bw_put_u16le(&w, (uint16_t)i);
        bw_printf(&w, "record %d of %d: %.*s\n", i, RECORDS, i % 50,
                  "..................................................");
        bw_patch_u32le(&w, at, (uint32_t)(bw_tell(&w) - at - 4));
    }
    rc = bw_flush(&w);                 /* the one check: sends the rest */
    if (rc == BW_EIO) /* the fd's errno, kept with the recorded error */
        fprintf(stderr, "records: write: %s\n", strerror(bw_errno(&w)));
    else if (rc != BW_OK)
        fprintf(stderr, "records: %s\n", bw_strerror(rc));
    bw_release(&w);
    if (close(fd) != 0 || rc != BW_OK) return 1;

    i = check(path, &bytes);
    printf("%d records, %lu bytes, every length matches: %s\n", i, bytes,
           i == RECORDS ? "yes" : "no");
    return i == RECORDS ? 0 : 1;
}
