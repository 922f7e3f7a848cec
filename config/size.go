package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a number of bytes that TOML reads from a string such as "15MB",
// "512KB" or "1GB". K, M and G count in 1024s, with or without B or iB
// ("15MB" is 15 MiB, as ntfy reads its sizes); a bare number is bytes.
type Size int64

// Bytes is s as an int64.
func (s Size) Bytes() int64 { return int64(s) }

// UnmarshalText parses a size such as "15MB".
func (s *Size) UnmarshalText(text []byte) error {
	n, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// MarshalText writes the size in the largest unit that divides it.
func (s Size) MarshalText() ([]byte, error) {
	n := int64(s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return []byte(strconv.FormatInt(n/u.mult, 10) + u.suffix), nil
		}
	}
	return []byte(strconv.FormatInt(n, 10)), nil
}

// ParseSize reads a size as Size.UnmarshalText does.
func ParseSize(raw string) (Size, error) {
	v := strings.ToUpper(strings.TrimSpace(raw))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q (use e.g. \"15MB\", \"512KB\" or \"1GB\")", raw)
	}
	return Size(n * mult), nil
}
