#!/bin/sh
# Verify a Herald callback's Standard Webhooks signature with openssl.
#   HERALD_SECRET=whsec_... WEBHOOK_ID=dlv_... WEBHOOK_TIMESTAMP=... WEBHOOK_SIGNATURE='v1,...' sh verify.sh < body.json
# (A shell string comparison is not constant-time: fine for debugging, use one
# of the other examples in a receiver.)
body=$(mktemp) && cat > "$body"   # the raw request body, byte for byte
now=$(date +%s)
age=$((now - ${WEBHOOK_TIMESTAMP:-0}))
case "$WEBHOOK_TIMESTAMP" in ''|*[!0-9]*) age=999999 ;; esac
if [ -z "$WEBHOOK_ID" ] || [ "${age#-}" -gt 300 ]; then echo invalid; rm -f "$body"; exit 1; fi
# The key is the bytes the secret after whsec_ encodes in base64.
hexkey=$(printf '%s' "${HERALD_SECRET#whsec_}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
expected=$({ printf '%s.%s.' "$WEBHOOK_ID" "$WEBHOOK_TIMESTAMP"; cat "$body"; } |
  openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | base64)
rm -f "$body"
for s in $WEBHOOK_SIGNATURE; do
  if [ "$s" = "v1,$expected" ]; then echo valid; exit 0; fi
done
echo invalid; exit 1
