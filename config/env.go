package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// envPrefix starts every environment variable that overrides a key:
// HERALD_<SECTION>_<KEY>, upper-cased, e.g. HERALD_DELIVERY_MAX_ATTEMPTS.
const envPrefix = "HERALD_"

// EnvName returns the environment variable that overrides the dotted key,
// e.g. "push.apns.key_file" -> "HERALD_PUSH_APNS_KEY_FILE".
func EnvName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// applyEnv overrides cfg from HERALD_* variables, walking the struct by its
// toml tags, so a key added to Config is overridable without more code. An
// empty variable counts as unset. Lists are comma-separated. auth.providers
// (an array of tables) cannot be expressed as one variable and is not
// overridable: it comes from the file only.
//
// It returns, for each key it set, the variable it came from.
func applyEnv(cfg *Config, getenv func(string) string) (map[string]string, error) {
	set := map[string]string{}
	err := walkEnv(reflect.ValueOf(cfg).Elem(), "", getenv, set)
	return set, err
}

func walkEnv(v reflect.Value, prefix string, getenv func(string) string, set map[string]string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := tagName(f)
		if prefix != "" {
			key = prefix + "." + key
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			if err := walkEnv(fv, key, getenv, set); err != nil {
				return err
			}
			continue
		}
		name := EnvName(key)
		raw := getenv(name)
		if raw == "" {
			continue
		}
		if err := setFromEnv(fv, raw); err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
		set[key] = name
	}
	return nil
}

// setFromEnv parses raw into v, which has one of the types Config uses.
func setFromEnv(v reflect.Value, raw string) error {
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%q is not a duration (use e.g. \"10m\" or \"720h\")", raw)
		}
		v.Set(reflect.ValueOf(Duration{d}))
	case v.Type() == sizeType:
		n, err := ParseSize(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%q is not a boolean (use true or false)", raw)
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%q is not an integer", raw)
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		list := []string{}
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		v.Set(reflect.ValueOf(list))
	default:
		// auth.providers: an array of tables has no one-variable form.
		return fmt.Errorf("cannot be set from the environment; use the config file")
	}
	return nil
}
