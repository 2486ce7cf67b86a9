/* constant_release (host API): a piece's promise not to read a constant's
 * bytes again, and the host giving them back once no reader is left
 * (core/constant_release.c). */
#ifndef TESSERA_CORE_CONSTANT_RELEASE_H
#define TESSERA_CORE_CONSTANT_RELEASE_H

#include "graph_view.h"

tsr_status *constant_release(struct tsr_graph *piece, const ir_value *value);

#endif
