#!/bin/sh
# Verify a Herald callback signature with openssl.
#   HERALD_SECRET=whsec_... HERALD_SIGNATURE='t=...,v1=...' sh verify.sh < body.json
# (A shell string comparison is not constant-time: fine for debugging, use one
# of the other examples in a receiver.)
body=$(mktemp) && cat > "$body"   # the raw request body, byte for byte
t=$(printf '%s' "$HERALD_SIGNATURE" | tr ',' '\n' | sed -n 's/^ *t=//p')
v1=$(printf '%s' "$HERALD_SIGNATURE" | tr ',' '\n' | sed -n 's/^ *v1=//p' | head -n 1)
now=$(date +%s)
age=$((now - ${t:-0}))
if [ -z "$t" ] || [ "${age#-}" -gt 300 ]; then echo invalid; rm -f "$body"; exit 1; fi
expected=$({ printf '%s.' "$t"; cat "$body"; } | openssl dgst -sha256 -hmac "$HERALD_SECRET" | sed 's/^.*= *//')
rm -f "$body"
if [ "$expected" = "$v1" ]; then echo valid; else echo invalid; exit 1; fi
