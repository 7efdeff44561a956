/*
 * client/ssl.h
 *	  OpenSSL, opened at the first TLS URL: the functions tls.c calls, in a
 *	  table filled from libssl (and the libcrypto it brings).
 *
 * Loading and relocating libssl and libcrypto costs milliseconds, more
 * than a lease's round trip on a local network, and most connections are
 * plain; so libfence does not link OpenSSL, and ssl.c opens it the first
 * time a URL asks for TLS.  The soname is that of the headers tls.c is
 * built with (libssl.so.3 for OpenSSL 3), so that the table's types are
 * those of the library it is filled from.  A program that uses OpenSSL
 * itself (libpq does) has it loaded already: dlopen gives that copy back.
 *
 * tls.c calls OpenSSL's functions and macros as OpenSSL spells them: the
 * names below are macros for the table's entries, as pq.h does for libpq.
 */
#ifndef FENCE_SSL_H
#define FENCE_SSL_H

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
#define FENCE_LIBSSL_SONAME "libssl.so." OPENSSL_MSTR(OPENSSL_VERSION_MAJOR)
#else
#define FENCE_LIBSSL_SONAME "libssl.so.1.1"
#endif

/* Every function of libssl and libcrypto that tls.c calls, directly or
 * through OpenSSL's macros (SSL_CTX_set_mode is SSL_CTX_ctrl, ...). */
#define FENCE_SSL_FUNCS(X) \
	X(BIO_clear_flags) X(BIO_free) X(BIO_get_data) \
	X(BIO_get_new_index) X(BIO_meth_free) X(BIO_meth_new) \
	X(BIO_meth_set_create) X(BIO_meth_set_ctrl) X(BIO_meth_set_read) \
	X(BIO_meth_set_write) X(BIO_new) X(BIO_new_mem_buf) \
	X(BIO_set_data) X(BIO_set_flags) X(BIO_set_init) \
	X(ERR_clear_error) X(ERR_peek_last_error) X(ERR_reason_error_string) \
	X(EVP_PKEY_free) X(OPENSSL_cleanse) X(PEM_read_bio_PrivateKey) \
	X(PEM_read_bio_X509) X(PEM_read_bio_X509_AUX) X(SSL_connect) \
	X(SSL_ctrl) X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) \
	X(SSL_CTX_free) X(SSL_CTX_get_cert_store) X(SSL_CTX_load_verify_locations) \
	X(SSL_CTX_new) X(SSL_CTX_set_verify) X(SSL_CTX_up_ref) \
	X(SSL_CTX_use_certificate) X(SSL_CTX_use_PrivateKey) X(SSL_free) \
	X(SSL_get0_param) X(SSL_get_error) X(SSL_get_shutdown) X(SSL_get_verify_result) \
	X(SSL_new) X(SSL_peek) X(SSL_pending) X(SSL_read) \
	X(SSL_set1_host) X(SSL_set_bio) X(SSL_set_connect_state) \
	X(SSL_set_hostflags) X(SSL_set_msg_callback) X(SSL_shutdown) \
	X(SSL_write) X(TLS_client_method) X(X509_free) \
	X(X509_get_default_cert_dir) X(X509_get_default_cert_dir_env) X(X509_get_default_cert_file) \
	X(X509_get_default_cert_file_env) X(X509_STORE_add_cert) X(X509_verify_cert_error_string) \
	X(X509_VERIFY_PARAM_set1_ip_asc)

struct fence_ssl
{
#define FENCE_SSL_MEMBER(f) __typeof__(f) *f;
	FENCE_SSL_FUNCS(FENCE_SSL_MEMBER)
#undef FENCE_SSL_MEMBER
};

extern struct fence_ssl fence_ssl;

/*
 * Fill fence_ssl (once per process; every thread may call it): FENCE_OK,
 * or FENCE_ERR with FENCE_ERR_TLS in "ctx" when libssl cannot be opened or
 * lacks a function.  Before any call through the table.
 */
struct fence_ctx;
int			fence_ssl_load(struct fence_ctx *ctx);

/* From here on, OpenSSL's names are the table's. */
#ifndef FENCE_SSL_FILLING		/* ssl.c fills the table: it needs the real names */
#define BIO_clear_flags fence_ssl.BIO_clear_flags
#define BIO_free fence_ssl.BIO_free
#define BIO_get_data fence_ssl.BIO_get_data
#define BIO_get_new_index fence_ssl.BIO_get_new_index
#define BIO_meth_free fence_ssl.BIO_meth_free
#define BIO_meth_new fence_ssl.BIO_meth_new
#define BIO_meth_set_create fence_ssl.BIO_meth_set_create
#define BIO_meth_set_ctrl fence_ssl.BIO_meth_set_ctrl
#define BIO_meth_set_read fence_ssl.BIO_meth_set_read
#define BIO_meth_set_write fence_ssl.BIO_meth_set_write
#define BIO_new fence_ssl.BIO_new
#define BIO_new_mem_buf fence_ssl.BIO_new_mem_buf
#define BIO_set_data fence_ssl.BIO_set_data
#define BIO_set_flags fence_ssl.BIO_set_flags
#define BIO_set_init fence_ssl.BIO_set_init
#define ERR_clear_error fence_ssl.ERR_clear_error
#define ERR_peek_last_error fence_ssl.ERR_peek_last_error
#define ERR_reason_error_string fence_ssl.ERR_reason_error_string
#define EVP_PKEY_free fence_ssl.EVP_PKEY_free
#define OPENSSL_cleanse fence_ssl.OPENSSL_cleanse
#define PEM_read_bio_PrivateKey fence_ssl.PEM_read_bio_PrivateKey
#define PEM_read_bio_X509 fence_ssl.PEM_read_bio_X509
#define PEM_read_bio_X509_AUX fence_ssl.PEM_read_bio_X509_AUX
#define SSL_connect fence_ssl.SSL_connect
#define SSL_ctrl fence_ssl.SSL_ctrl
#define SSL_CTX_check_private_key fence_ssl.SSL_CTX_check_private_key
#define SSL_CTX_ctrl fence_ssl.SSL_CTX_ctrl
#define SSL_CTX_free fence_ssl.SSL_CTX_free
#define SSL_CTX_get_cert_store fence_ssl.SSL_CTX_get_cert_store
#define SSL_CTX_load_verify_locations fence_ssl.SSL_CTX_load_verify_locations
#define SSL_CTX_new fence_ssl.SSL_CTX_new
#define SSL_CTX_set_verify fence_ssl.SSL_CTX_set_verify
#define SSL_CTX_up_ref fence_ssl.SSL_CTX_up_ref
#define SSL_CTX_use_certificate fence_ssl.SSL_CTX_use_certificate
#define SSL_CTX_use_PrivateKey fence_ssl.SSL_CTX_use_PrivateKey
#define SSL_free fence_ssl.SSL_free
#define SSL_get0_param fence_ssl.SSL_get0_param
#define SSL_get_error fence_ssl.SSL_get_error
#define SSL_get_shutdown fence_ssl.SSL_get_shutdown
#define SSL_get_verify_result fence_ssl.SSL_get_verify_result
#define SSL_new fence_ssl.SSL_new
#define SSL_peek fence_ssl.SSL_peek
#define SSL_pending fence_ssl.SSL_pending
#define SSL_read fence_ssl.SSL_read
#define SSL_set1_host fence_ssl.SSL_set1_host
#define SSL_set_bio fence_ssl.SSL_set_bio
#define SSL_set_connect_state fence_ssl.SSL_set_connect_state
#define SSL_set_hostflags fence_ssl.SSL_set_hostflags
#define SSL_set_msg_callback fence_ssl.SSL_set_msg_callback
#define SSL_shutdown fence_ssl.SSL_shutdown
#define SSL_write fence_ssl.SSL_write
#define TLS_client_method fence_ssl.TLS_client_method
#define X509_free fence_ssl.X509_free
#define X509_get_default_cert_dir fence_ssl.X509_get_default_cert_dir
#define X509_get_default_cert_dir_env fence_ssl.X509_get_default_cert_dir_env
#define X509_get_default_cert_file fence_ssl.X509_get_default_cert_file
#define X509_get_default_cert_file_env fence_ssl.X509_get_default_cert_file_env
#define X509_STORE_add_cert fence_ssl.X509_STORE_add_cert
#define X509_verify_cert_error_string fence_ssl.X509_verify_cert_error_string
#define X509_VERIFY_PARAM_set1_ip_asc fence_ssl.X509_VERIFY_PARAM_set1_ip_asc
#endif

#endif							/* FENCE_SSL_H */
