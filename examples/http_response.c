/* SPDX-License-Identifier: MIT */
/* http_response.c - an HTTP/1.1 response whose Content-Length is known only
 * once the body is built, sent with one writev.
 *
 * The body is built first, in a segmented writer (blocks are linked, never
 * copied, however long it gets). Then the header goes into a second
 * segmented writer, with the body's length now known, and bw_move appends
 * the body to it: the body's blocks are relinked after the header's, so no
 * byte of the body is copied. bw_write_fd sends header and body together
 * with writev (here to stdout; a socket works the same, and EAGAIN on a
 * non-blocking one leaves the rest held for the next call).
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/http_response.c -pthread -o http_response
 * or against the installed library:
 *   cc -std=c11 examples/http_response.c $(pkg-config --cflags --libs bufwriter) \
 *      -o http_response
 *
 * Run:  ./http_response
 */
#include "bufwriter.h"

#include <stdio.h>
#include <string.h>
#ifdef _WIN32
#  include <fcntl.h>
#  include <io.h> /* _setmode: stdout in binary mode, the CRLFs as they are */
#endif

struct city {
    const char *name;
    unsigned population; /* thousands */
};

static const struct city cities[] = {
    {"Lisbon", 545}, {"Porto", 232}, {"Braga", 193}, {"Coimbra", 140}, {"Faro", 67},
};

/* Static text can be linked rather than copied: the writer points at it. */
static const char page_end[] = "</table>\n</body>\n</html>\n";

static void build_body(bw_writer *body)
{
    size_t i;
    bw_puts(body, "<!DOCTYPE html>\n<html>\n<head><title>Cities</title></head>\n<body>\n");
    bw_puts(body, "<table>\n<tr><th>city</th><th>population</th></tr>\n");
    for (i = 0; i < sizeof cities / sizeof cities[0]; i++)
        bw_printf(body, "<tr><td>%s</td><td>%u000</td></tr>\n", cities[i].name,
                  cities[i].population);
    bw_append_ref(body, page_end, strlen(page_end), NULL, NULL);
}

int main(void)
{
    bw_writer head, body;
    int rc;
#ifdef _WIN32
    (void)_setmode(1, _O_BINARY);
#endif

    bw_init_chain(&body, NULL);
    bw_init_chain(&head, NULL); /* the same (shared) pool: bw_move relinks */
    build_body(&body);

    bw_puts(&head, "HTTP/1.1 200 OK\r\n");
    bw_puts(&head, "Content-Type: text/html; charset=utf-8\r\n");
    bw_printf(&head, "Content-Length: %zu\r\n", bw_len(&body)); /* known now */
    bw_puts(&head, "Connection: close\r\n\r\n");
    rc = bw_move(&head, &body); /* header, then body: no byte copied */

    /* One check for everything written, then send. */
    if (rc == BW_OK) rc = bw_error(&head);
    if (rc == BW_OK) rc = bw_write_fd(&head, 1, NULL); /* writev; consumes what went out */
    if (rc == BW_EIO) /* not recorded, but kept with the writer: bw_errno */
        fprintf(stderr, "http_response: write: %s\n", strerror(bw_errno(&head)));
    else if (rc != BW_OK)
        fprintf(stderr, "http_response: %s\n", bw_strerror(rc));
    bw_release(&head);
    bw_release(&body);
    return rc == BW_OK ? 0 : 1;
}
