package secret_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/secret"
)

const apiKey = "sk-live-DO-NOT-PRINT-4242"

type providerConfig struct {
	Name   string        `json:"name"`
	APIKey secret.Secret `json:"api_key"`
}

func TestSecretNeverPrints(t *testing.T) {
	s := secret.Secret(apiKey)
	cfg := providerConfig{Name: "openai", APIKey: s}
	var outputs []string

	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%T=%[1]v"} {
		outputs = append(outputs, fmt.Sprintf(format, s), fmt.Sprintf(format, cfg), fmt.Sprintf(format, &cfg))
	}
	outputs = append(outputs, fmt.Sprint(s), fmt.Sprintln(s, cfg), s.String(), fmt.Errorf("call failed with key %v", s).Error())
	outputs = append(outputs, fmt.Sprint([]secret.Secret{s}), fmt.Sprint(map[string]secret.Secret{"k": s}))

	for _, v := range []any{s, cfg, &cfg, []secret.Secret{s}, map[string]secret.Secret{"k": s}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%T) = %v", v, err)
		}
		outputs = append(outputs, string(b))
	}

	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		log := slog.New(h)
		log.Info("calling provider", "api_key", s, "config", cfg)
		log.Info("calling provider", slog.Any("api_key", s), slog.Group("provider", "key", s))
		log.With("api_key", s).Info("with")
	}
	outputs = append(outputs, buf.String())

	for _, out := range outputs {
		if strings.Contains(out, apiKey) || strings.Contains(out, "DO-NOT-PRINT") ||
			strings.Contains(out, fmt.Sprintf("%x", apiKey)) {
			t.Errorf("output reveals the secret: %s", out)
		}
	}
	if !strings.Contains(buf.String(), secret.Redacted) {
		t.Errorf("slog output lacks %s:\n%s", secret.Redacted, buf.String())
	}
	if got := fmt.Sprint(s); got != secret.Redacted {
		t.Errorf("fmt.Sprint = %q, want %q", got, secret.Redacted)
	}
	if got, _ := json.Marshal(cfg); string(got) != `{"name":"openai","api_key":"[REDACTED]"}` {
		t.Errorf("json.Marshal = %s", got)
	}
}

func TestSecretRevealAndDecode(t *testing.T) {
	var cfg providerConfig
	if err := json.Unmarshal([]byte(`{"name":"openai","api_key":"`+apiKey+`"}`), &cfg); err != nil {
		t.Fatalf("json.Unmarshal = %v", err)
	}
	if got := cfg.APIKey.Reveal(); got != apiKey {
		t.Errorf("Reveal() after decoding = %q, want %q", got, apiKey)
	}
}
