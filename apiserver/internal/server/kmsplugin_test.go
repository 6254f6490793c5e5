package server

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	kmsservice "k8s.io/kms/pkg/service"
)

// testKMS is a KMS v2 plugin for the tests: it wraps the apiserver's data
// keys with an AES-GCM key only it holds, as a cloud KMS would.
type testKMS struct {
	aead cipher.AEAD
}

const testKMSKeyID = "test-kek-1"

func newTestKMS() (*testKMS, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &testKMS{aead: aead}, nil
}

// Encrypt implements kmsservice.Service.
func (k *testKMS) Encrypt(_ context.Context, _ string, data []byte) (*kmsservice.EncryptResponse, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &kmsservice.EncryptResponse{Ciphertext: k.aead.Seal(nonce, nonce, data, nil), KeyID: testKMSKeyID}, nil
}

// Decrypt implements kmsservice.Service.
func (k *testKMS) Decrypt(_ context.Context, _ string, req *kmsservice.DecryptRequest) ([]byte, error) {
	if req.KeyID != testKMSKeyID {
		return nil, fmt.Errorf("unknown key %q", req.KeyID)
	}
	n := k.aead.NonceSize()
	if len(req.Ciphertext) < n {
		return nil, errors.New("ciphertext too short")
	}
	return k.aead.Open(nil, req.Ciphertext[:n], req.Ciphertext[n:], nil)
}

// Status implements kmsservice.Service.
func (k *testKMS) Status(context.Context) (*kmsservice.StatusResponse, error) {
	return &kmsservice.StatusResponse{Version: "v2", Healthz: "ok", KeyID: testKMSKeyID}, nil
}

// startTestKMS serves the plugin on a unix socket until the returned stop.
func startTestKMS(socket string) (func(), error) {
	k, err := newTestKMS()
	if err != nil {
		return nil, err
	}
	svc := kmsservice.NewGRPCService(socket, 5*time.Second, k)
	go func() { _ = svc.ListenAndServe() }()
	return svc.Shutdown, nil
}
