// Verify a Herald callback signature.
//   HERALD_SECRET=whsec_... HERALD_SIGNATURE='t=...,v1=...' node verify.js < body.json
const crypto = require("crypto");

function verify(secret, header, body) {
  const parts = header.split(",").map((p) => p.trim().split("="));
  const t = Number((parts.find(([k]) => k === "t") || [])[1]);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > 300) return false; // 300-second tolerance
  const expected = crypto.createHmac("sha256", secret).update(`${t}.`).update(body).digest();
  return parts
    .filter(([k]) => k === "v1")
    .some(([, v]) => {
      const got = Buffer.from(v || "", "hex");
      return got.length === expected.length && crypto.timingSafeEqual(got, expected); // constant-time
    });
}

const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const body = Buffer.concat(chunks); // the raw request body, byte for byte
  const ok = verify(process.env.HERALD_SECRET, process.env.HERALD_SIGNATURE, body);
  console.log(ok ? "valid" : "invalid");
  process.exit(ok ? 0 : 1);
});
