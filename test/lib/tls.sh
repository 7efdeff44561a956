# test/lib/tls.sh: certificates made by the tests, and Redis servers that
# speak TLS with them.  Source it after servers.sh, then:
#
#   tls_certs DIR        # make the files below in DIR (openssl, faketime)
#   tls_on DIR [CERT]    # servers started from now on speak only TLS, with
#                        # DIR/CERT.pem (default "server"), no client
#                        # certificates asked for; TLS_AUTH_CLIENTS=yes asks
#                        # for one signed by the CA
#   tls_off              # back to plain servers
#   tls_url NAME [PARAM...]  # rediss://127.0.0.1:PORT?tls-ca-cert-file=...
#   tls_query [PARAM...] # the query that trusts the test CA, and PARAMs
#
# The files, all PEM:
#   ca.pem ca.key           the test CA
#   server.pem server.key   signed by it, for 127.0.0.1, localhost and
#                           redis.test
#   wronghost.pem .key      signed by it, for wrong.example only
#   expired.pem .key        signed by it, for 127.0.0.1, expired in 2000
#   rogue-ca.pem            another CA, trusted by nobody
#   rogue.pem rogue.key     signed by the rogue CA, for 127.0.0.1
#   client.pem client.key   a client certificate signed by the test CA
#   rogue-client.pem .key   a client certificate signed by the rogue CA
#   cadir/                  ca.pem as a hashed CA directory (openssl rehash)

# tls_sign DIR NAME CA SAN [FAKETIME]: a key and a certificate NAME signed by
# CA, for the subjectAltName SAN; with FAKETIME, made at that (past) time
# and valid for a day.
tls_sign() {
	local dir=$1 name=$2 ca=$3 san=$4 at=${5:-} days=30
	[ -z "$at" ] || days=1
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "/CN=$name" 2>/dev/null
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" >"$dir/$name.ext"
	${at:+faketime "$at"} openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" \
		-CAkey "$dir/$ca.key" -CAcreateserial -days "$days" \
		-extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
}

# tls_ca DIR NAME: a self-signed CA, with exactly the extensions of its
# own configuration: not the system openssl.cnf's, to which OpenSSL 1.1's
# -addext adds a second basicConstraints (OpenSSL 3 replaces it), and
# OpenSSL 1.1 then refuses the CA as invalid ("unknown ca").
tls_ca() {
	cat >"$1/$2.cnf" <<-'CNF'
		[req]
		distinguished_name = dn
		x509_extensions = ca
		[dn]
		[ca]
		basicConstraints = critical,CA:TRUE
		keyUsage = critical,keyCertSign,cRLSign
		subjectKeyIdentifier = hash
		authorityKeyIdentifier = keyid:always
	CNF
	openssl req -x509 -config "$1/$2.cnf" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$1/$2.key" -out "$1/$2.pem" -subj "/CN=pgfence test $2" -days 30 \
		2>/dev/null
}

# tls_verify DIR CA NAME...: each certificate NAME checks out against CA
# (the servers' and clients' TLS libraries would refuse it otherwise, and
# every test would fail on the same "unknown ca").
tls_verify() {
	local dir=$1 ca=$2 name
	shift 2
	for name in "$@"; do
		openssl verify -CAfile "$dir/$ca.pem" "$dir/$name.pem" >/dev/null 2>&1 || {
			echo "tls_certs: $name.pem does not verify against $ca.pem: $(openssl verify -CAfile "$dir/$ca.pem" "$dir/$name.pem" 2>&1 | tail -n 1)" >&2
			return 1
		}
	done
}

tls_certs() {
	local dir=$1
	mkdir -p "$dir/cadir"
	tls_ca "$dir" ca &&
		tls_ca "$dir" rogue-ca &&
		tls_sign "$dir" server ca "IP:127.0.0.1,DNS:localhost,DNS:redis.test" &&
		tls_sign "$dir" wronghost ca "DNS:wrong.example" &&
		tls_sign "$dir" expired ca "IP:127.0.0.1" "2000-01-01 00:00:00" &&
		tls_sign "$dir" rogue rogue-ca "IP:127.0.0.1" &&
		tls_sign "$dir" client ca "DNS:client" &&
		tls_sign "$dir" rogue-client rogue-ca "DNS:client" &&
		tls_verify "$dir" ca server wronghost client &&
		tls_verify "$dir" rogue-ca rogue rogue-client &&
		cp "$dir/ca.pem" "$dir/cadir/" &&
		openssl rehash "$dir/cadir" 2>/dev/null &&
		# redis-server runs as this user, but keep the keys private anyway
		chmod 600 "$dir"/*.key || { echo "tls_certs: openssl failed" >&2; return 1; }
}

tls_on() {
	local dir=$1 cert=${2:-server}
	TLS_DIR=$dir
	REDIS_TLS_SERVER="--tls-cert-file $dir/$cert.pem --tls-key-file $dir/$cert.key"
	REDIS_TLS_SERVER+=" --tls-ca-cert-file $dir/ca.pem --tls-auth-clients ${TLS_AUTH_CLIENTS:-no}"
	# redis-cli checks the CA but not the name: it connects to whatever cert
	REDIS_TLS_CLI="--tls --cacert $dir/ca.pem --cert $dir/client.pem --key $dir/client.key"
	REDIS_TLS_UNVERIFIED=
	[ "$cert" = server ] || [ "$cert" = wronghost ] ||
		REDIS_TLS_CLI="--tls --insecure --cert $dir/client.pem --key $dir/client.key"
	# redis-cli before 6.2 (bullseye's 6.0) has no --insecure
	[ "$cert" = server ] || [ "$cert" = wronghost ] || redis-cli --help 2>&1 | grep -q -- --insecure ||
		REDIS_TLS_UNVERIFIED=1
}

tls_off() {
	REDIS_TLS_SERVER=
	REDIS_TLS_CLI=
	REDIS_TLS_UNVERIFIED=
}

tls_query() {
	local q="tls-ca-cert-file=$TLS_DIR/ca.pem" p
	for p in "$@"; do q+="&$p"; done
	echo "$q"
}

tls_url() {
	local portvar=REDIS_PORT_$1
	shift
	echo "rediss://127.0.0.1:${!portvar}?$(tls_query "$@")"
}
