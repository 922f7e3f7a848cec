// Verify a Herald callback's Standard Webhooks signature.
//   HERALD_SECRET=whsec_... WEBHOOK_ID=dlv_... WEBHOOK_TIMESTAMP=... WEBHOOK_SIGNATURE='v1,...' node verify.js < body.json
// (npm install standardwebhooks does the same.)
const crypto = require("crypto");

function verify(secret, id, timestamp, signatures, body) {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64"); // the key is the decoded bytes
  const t = Number(timestamp);
  if (!id || !Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > 300) return false; // 300-second tolerance
  const expected = crypto.createHmac("sha256", key).update(`${id}.${t}.`).update(body).digest();
  return signatures.split(" ").some((s) => {
    const [version, sig] = s.split(",");
    const got = Buffer.from(sig || "", "base64");
    return version === "v1" && got.length === expected.length && crypto.timingSafeEqual(got, expected); // constant-time
  });
}

const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const body = Buffer.concat(chunks); // the raw request body, byte for byte
  const env = process.env;
  const ok = verify(env.HERALD_SECRET, env.WEBHOOK_ID || "", env.WEBHOOK_TIMESTAMP || "", env.WEBHOOK_SIGNATURE || "", body);
  console.log(ok ? "valid" : "invalid");
  process.exit(ok ? 0 : 1);
});
