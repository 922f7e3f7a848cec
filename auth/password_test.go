package auth

import "testing"

func TestPasswordRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := CheckPassword(h, "correct horse"); err != nil || !ok {
		t.Fatalf("CheckPassword(right) = %v, %v; want true", ok, err)
	}
	if ok, _ := CheckPassword(h, "wrong horse"); ok {
		t.Fatal("CheckPassword(wrong) = true")
	}
	h2, _ := HashPassword("correct horse")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	if _, err := CheckPassword("$2a$10$notargon", "x"); err != ErrBadHash {
		t.Fatalf("bad hash: err = %v, want ErrBadHash", err)
	}
	if CheckNoUser("x") {
		t.Fatal("CheckNoUser returned true")
	}
}
