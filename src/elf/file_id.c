// SPDX-License-Identifier: Apache-2.0
#include "elf/file_id.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#define CHUNK 4096

static int read_at(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, buf + done, len - done, (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO; /* the file shrank under us */
		done += (size_t)r;
	}
	return 0;
}

int file_id__htlhash(int fd, uint64_t size, uint8_t out[FILE_ID_HTLHASH_LEN])
{
	uint8_t head[CHUNK], tail[CHUNK], len_be[8], digest[EVP_MAX_MD_SIZE];
	size_t head_len = size < CHUNK ? (size_t)size : CHUNK;
	size_t tail_len = head_len;
	unsigned int digest_len = 0;
	EVP_MD_CTX *ctx;
	int err;

	err = read_at(fd, head, head_len, 0);
	if (!err)
		err = read_at(fd, tail, tail_len, size - tail_len);
	if (err)
		return err;
	for (int i = 0; i < 8; i++)
		len_be[i] = (uint8_t)(size >> (56 - 8 * i));
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, head, head_len) != 1 ||
	    EVP_DigestUpdate(ctx, tail, tail_len) != 1 || EVP_DigestUpdate(ctx, len_be, 8) != 1 ||
	    EVP_DigestFinal_ex(ctx, digest, &digest_len) != 1 || digest_len < FILE_ID_HTLHASH_LEN)
		err = -EIO;
	EVP_MD_CTX_free(ctx);
	if (err)
		return err;
	for (int i = 0; i < FILE_ID_HTLHASH_LEN; i++)
		out[i] = digest[i];
	return 0;
}

int file_id__content_hash(int fd, uint64_t size, uint8_t out[FILE_ID_HTLHASH_LEN])
{
	uint8_t buf[CHUNK], digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	EVP_MD_CTX *ctx;
	int err = 0;

	if (size > FILE_ID_CONTENT_MAX)
		return -EFBIG;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		err = -EIO;
	for (uint64_t off = 0; !err && off < size; off += CHUNK) {
		size_t len = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		err = read_at(fd, buf, len, off);
		if (!err && EVP_DigestUpdate(ctx, buf, len) != 1)
			err = -EIO;
	}
	if (!err &&
	    (EVP_DigestFinal_ex(ctx, digest, &digest_len) != 1 || digest_len < FILE_ID_HTLHASH_LEN))
		err = -EIO;
	EVP_MD_CTX_free(ctx);
	if (!err)
		memcpy(out, digest, FILE_ID_HTLHASH_LEN);
	return err;
}

uint64_t file_id__from_htlhash(const uint8_t hash[FILE_ID_HTLHASH_LEN])
{
	uint64_t id = 0;

	for (int i = 0; i < 8; i++)
		id = id << 8 | hash[i];
	/* 0 and ~0 are reserved in the BPF maps (pid marker, anonymous code). */
	return id && id != ~0ull ? id : 1;
}

void file_id__hex(const uint8_t hash[FILE_ID_HTLHASH_LEN], char out[2 * FILE_ID_HTLHASH_LEN + 1])
{
	for (int i = 0; i < FILE_ID_HTLHASH_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", hash[i]);
}
