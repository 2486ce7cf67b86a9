/* Writing protobuf wire format by hand (tools/pb_writer.c): the tools that
 * cut models (compare's one-node models, reduce's subgraphs) copy most of
 * their bytes verbatim from the file and write only the envelope. Errors
 * (out of memory, sizes past SIZE_MAX) set `failed`; later writes then do
 * nothing. */
#ifndef TESSERA_TOOLS_PB_WRITER_H
#define TESSERA_TOOLS_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pb_buf {
    uint8_t *p;
    size_t len, cap;
    bool failed;
} pb_buf;

void pb_put_bytes(pb_buf *b, const void *data, size_t n);
void pb_put_varint(pb_buf *b, uint64_t v);
/* Field `field` as a varint (wire type 0). */
void pb_put_varint_field(pb_buf *b, unsigned field, uint64_t v);
/* Field `field` as length-delimited bytes (wire type 2). */
void pb_put_len_field(pb_buf *b, unsigned field, const void *data, size_t n);
/* `inner` as a submessage of field `field`; inner is freed and emptied. */
void pb_put_message(pb_buf *b, unsigned field, pb_buf *inner);

#endif
