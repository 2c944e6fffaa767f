/* Qwen3's tokenizer: byte-level BPE (GPT-2's byte-to-character alphabet), Qwen2's pre-tokenizer regex, NFC
 * normalization, and added tokens (<|im_start|>, <|im_end|>, <|endoftext|>, <think>, ...) matched verbatim
 * before anything else, as Hugging Face's tokenizers does. Read from a GGUF file's tokenizer.ggml.* metadata
 * or from a tokenizer.json. */
#ifndef FR_TOKENIZER_H
#define FR_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/fr_err.h"
#include "model/gguf.h"

struct tok_piece {
    uint32_t off, len; /* bytes in the arena */
};

struct tok_merge {
    int32_t a, b; /* the pair's ids; a == -1: empty slot */
    int32_t rank, id;
};

struct tokenizer {
    int n_vocab;
    unsigned char *arena;     /* every piece's bytes */
    struct tok_piece *pieces; /* [n_vocab] a normal token's bytes, an added token's text; len 0: no token */
    unsigned char *added;     /* [n_vocab] 1: an added (special) token, matched verbatim in the text */
    int32_t *map;             /* [map_cap] open-addressed ids of the normal pieces, -1 empty */
    uint32_t map_cap;
    struct tok_merge *merges; /* [merge_cap] open-addressed by (a, b) */
    uint32_t merge_cap;
    int n_merges;
    int byte_id[256]; /* the token of each single byte */
    int *added_ids;   /* [n_added] */
    int n_added;
    int eos_id;       /* -1 when unknown */
    char source[512]; /* the file it came from, for messages */
};

/* From a parsed GGUF file (tokenizer.ggml.model "gpt2", tokens, token_type, merges). Errors name the file
 * and the token or merge: a piece that is not valid UTF-8 or holds a character outside the byte alphabet, a
 * duplicated piece, a merge whose parts or result are not in the vocabulary, a byte without a token. */
int tokenizer_from_gguf(struct tokenizer *t, const struct gguf_file *g, struct fr_err *err);

/* From a Hugging Face tokenizer.json (model.type BPE, model.vocab, model.merges as "a b" strings or [a, b]
 * pairs, added_tokens); the same checks. */
int tokenizer_from_json(struct tokenizer *t, const char *path, struct fr_err *err);

/* From a GGUF file (its metadata) or a tokenizer.json, told apart by the first bytes. */
int tokenizer_load(struct tokenizer *t, const char *path, struct fr_err *err);

void tokenizer_free(struct tokenizer *t);

/* Encodes text[0, len) (UTF-8) into a malloc'd array *ids of *n ids. Fails on invalid UTF-8 (naming the
 * byte offset). */
int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int **ids, int *n,
                     struct fr_err *err);

/* The bytes of token id (an added token's text as is); NULL with *len 0 for an id outside the vocabulary
 * or without a token. Pieces may split a UTF-8 character: join them before printing as text. */
const unsigned char *tokenizer_piece(const struct tokenizer *t, int id, size_t *len);

/* The id of an added token by its text, -1 when there is none. */
int tokenizer_find_added(const struct tokenizer *t, const char *text);

#endif
