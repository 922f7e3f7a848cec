# Verify a Herald callback signature.
#   HERALD_SECRET=whsec_... HERALD_SIGNATURE='t=...,v1=...' python3 verify.py < body.json
import hashlib, hmac, os, sys, time

def verify(secret: str, header: str, body: bytes) -> bool:
    parts = dict(p.strip().split("=", 1) for p in header.split(",") if "=" in p)
    try:
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - t) > 300:  # 300-second tolerance
        return False
    expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    v1s = [p.split("=", 1)[1] for p in header.split(",") if p.strip().startswith("v1=")]
    return any(hmac.compare_digest(expected, v) for v in v1s)  # constant-time

body = sys.stdin.buffer.read()  # the raw request body, byte for byte
ok = verify(os.environ["HERALD_SECRET"], os.environ["HERALD_SIGNATURE"], body)
print("valid" if ok else "invalid")
sys.exit(0 if ok else 1)
