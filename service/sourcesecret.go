package service

// CheckSourceSecret validates a channel's source secret: empty clears it,
// else 8 to 256 printable ASCII characters without spaces, as the
// platforms' secret fields and HTTP headers can carry it.
func CheckSourceSecret(s string) error {
	if s == "" {
		return nil
	}
	if len(s) < 8 || len(s) > 256 {
		return invalid("source_secret must be 8 to 256 characters, or empty to remove it")
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return invalid("source_secret must be printable ASCII without spaces")
		}
	}
	return nil
}
