// Package auth holds Herald's credential primitives: password hashing and,
// for OIDC sign-in, provider handling.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's minimum recommendation (19 MiB, 2 passes),
// chosen so a 2-core homelab box can still sign people in quickly.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// ErrBadHash is returned for a stored hash that is not an argon2id PHC string.
var ErrBadHash = errors.New("auth: unrecognised password hash")

// HashPassword returns an argon2id hash in PHC string format. It waits for
// a free slot like CheckPassword, and returns ErrBusy or ctx's error if it
// gets none.
func HashPassword(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: salt: %w", err)
	}
	var key []byte
	if err := passwordGate().run(ctx, func() {
		key = argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	}); err != nil {
		return "", err
	}
	return phc(salt, key), nil
}

func phc(salt, key []byte) string {
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// CheckPassword reports whether password matches the PHC hash, comparing in
// constant time. At most one check per core runs at once (see gate.go): a
// caller that cannot get a slot in time gets ErrBusy, and one whose ctx ends
// while it waits gets ctx's error.
func CheckPassword(ctx context.Context, hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrBadHash
	}
	var version int
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil {
		return false, ErrBadHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, ErrBadHash
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrBadHash
	}
	var got []byte
	if err := passwordGate().run(ctx, func() {
		got = argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	}); err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when an email is unknown, so a wrong email
// and a wrong password take the same time. It has the parameters of a real
// hash, hence its cost; its salt and key are fixed, since nothing is meant to
// match it, so making it costs nothing.
var dummyHash = phc(make([]byte, argonSaltLen), make([]byte, argonKeyLen))

// CheckNoUser spends the time of one password check. Like CheckPassword it
// returns ErrBusy or ctx's error when the check could not run.
func CheckNoUser(ctx context.Context, password string) error {
	_, err := CheckPassword(ctx, dummyHash, password)
	return err
}
