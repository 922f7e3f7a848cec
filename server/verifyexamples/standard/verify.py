# Verify a Herald callback's Standard Webhooks signature.
#   HERALD_SECRET=whsec_... WEBHOOK_ID=dlv_... WEBHOOK_TIMESTAMP=... WEBHOOK_SIGNATURE='v1,...' python3 verify.py < body.json
# (pip install standardwebhooks does the same.)
import base64, hashlib, hmac, os, sys, time

def verify(secret: str, msg_id: str, timestamp: str, signatures: str, body: bytes) -> bool:
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)  # the key is the decoded bytes
        t = int(timestamp)
    except ValueError:
        return False
    if not msg_id or abs(time.time() - t) > 300:  # 300-second tolerance
        return False
    expected = hmac.new(key, f"{msg_id}.{t}.".encode() + body, hashlib.sha256).digest()
    for s in signatures.split():
        version, _, sig = s.partition(",")
        try:
            got = base64.b64decode(sig, validate=True)
        except ValueError:
            continue
        if version == "v1" and hmac.compare_digest(got, expected):  # constant-time
            return True
    return False

body = sys.stdin.buffer.read()  # the raw request body, byte for byte
ok = verify(os.environ["HERALD_SECRET"], os.environ.get("WEBHOOK_ID", ""),
            os.environ.get("WEBHOOK_TIMESTAMP", ""), os.environ.get("WEBHOOK_SIGNATURE", ""), body)
print("valid" if ok else "invalid")
sys.exit(0 if ok else 1)
