package store

import (
	"context"
	"testing"
)

// TestRegisterDeviceTwice: registering a push token gives the device an id;
// registering the same token again updates that device instead of adding
// another.
func TestRegisterDeviceTwice(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	first := &Device{UserID: f.owner.ID, Platform: "web", Name: "Firefox", PushToken: "https://push.example.com/sub/2"}
	if err := f.s.RegisterDevice(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first.ID == "" {
		t.Fatal("a registered device has no id")
	}
	again := &Device{UserID: f.owner.ID, Platform: "web", Name: "Firefox 2", PushToken: first.PushToken}
	if err := f.s.RegisterDevice(ctx, again); err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("second registration: device %s created %v, want %s created %v", again.ID, again.CreatedAt, first.ID, first.CreatedAt)
	}
	devices, err := f.s.ListDevices(ctx, f.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(devices) != 1 || devices[0].ID != first.ID || devices[0].Name != "Firefox 2" {
		t.Errorf("devices after two registrations of one token: %+v, want %s renamed Firefox 2", devices, first.ID)
	}
}
