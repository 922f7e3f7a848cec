package auth

import (
	"context"
	"errors"
	"testing"
)

func TestPasswordRoundTrip(t *testing.T) {
	ctx := context.Background()
	h, err := HashPassword(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := CheckPassword(ctx, h, "correct horse"); err != nil || !ok {
		t.Fatalf("CheckPassword(right) = %v, %v; want true", ok, err)
	}
	if ok, _ := CheckPassword(ctx, h, "wrong horse"); ok {
		t.Fatal("CheckPassword(wrong) = true")
	}
	h2, _ := HashPassword(ctx, "correct horse")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	if _, err := CheckPassword(ctx, "$2a$10$notargon", "x"); err != ErrBadHash {
		t.Fatalf("bad hash: err = %v, want ErrBadHash", err)
	}
	if err := CheckNoUser(ctx, "x"); err != nil {
		t.Fatalf("CheckNoUser: %v", err)
	}
}

// TestPasswordEndedContext checks that a caller that has gone away does not
// start a computation.
func TestPasswordEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h, err := HashPassword(context.Background(), "pw")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := CheckPassword(ctx, h, "pw"); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("CheckPassword with an ended context = %v, %v; want false, context.Canceled", ok, err)
	}
	if err := CheckNoUser(ctx, "pw"); !errors.Is(err, context.Canceled) {
		t.Errorf("CheckNoUser with an ended context = %v, want context.Canceled", err)
	}
	if _, err := HashPassword(ctx, "pw"); !errors.Is(err, context.Canceled) {
		t.Errorf("HashPassword with an ended context = %v, want context.Canceled", err)
	}
}
