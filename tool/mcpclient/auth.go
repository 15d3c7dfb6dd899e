package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// maxMetadataBytes bounds a discovery document.
const maxMetadataBytes = 1 << 20

// bearerTransport adds a static bearer token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r2)
}

// tokenSource returns the server's OAuth2 client-credentials token source,
// creating it (and discovering the token endpoint) on first use, and makes
// sure it holds a token, so that a token endpoint that is down fails the
// connection rather than the first tool call. The source caches its token
// until shortly before it expires (golang.org/x/oauth2), across
// reconnects. ctx bounds discovery and the first fetch; refreshes use the
// Manager's lifetime context and the HTTP client's timeout.
func (s *server) tokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	if s.ts != nil {
		if _, err := s.ts.Token(); err != nil {
			return nil, fmt.Errorf("fetch OAuth token from %s: %w", s.tokenURL, err)
		}
		return s.ts, nil
	}
	o := s.cfg.OAuth
	tokenURL := o.TokenURL
	if tokenURL == "" {
		u, err := discoverTokenURL(ctx, s.m.httpClient, s.cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("discover OAuth token endpoint: %w (or set oauth token_url)", err)
		}
		tokenURL = u
	}
	cfg := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, TokenURL: tokenURL}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, s.m.httpClient))
	if err != nil {
		// Discovery runs again on the next attempt: the metadata may
		// have been what was wrong.
		return nil, fmt.Errorf("fetch OAuth token from %s: %w", tokenURL, err)
	}
	s.tokenURL = tokenURL
	s.ts = oauth2.ReuseTokenSource(tok, cfg.TokenSource(context.WithValue(s.m.ctx, oauth2.HTTPClient, s.m.httpClient)))
	return s.ts, nil
}

// discoverTokenURL finds the token endpoint of the authorization server
// protecting the MCP endpoint mcpURL: the protected-resource metadata
// (RFC 9728) at the well-known URLs of mcpURL, or at the resource_metadata
// of the WWW-Authenticate challenge of an unauthenticated request, names
// the authorization server, whose metadata (RFC 8414, then OpenID
// Connect discovery) names the token endpoint.
func discoverTokenURL(ctx context.Context, c *http.Client, mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil {
		return "", err
	}
	var candidates []string
	if p := strings.Trim(u.Path, "/"); p != "" {
		candidates = append(candidates, u.Scheme+"://"+u.Host+"/.well-known/oauth-protected-resource/"+p)
	}
	candidates = append(candidates, u.Scheme+"://"+u.Host+"/.well-known/oauth-protected-resource")
	var prm oauthex.ProtectedResourceMetadata
	var errs []error
	found := false
	for _, cand := range candidates {
		if err := getJSON(ctx, c, cand, &prm); err != nil {
			errs = append(errs, err)
			continue
		}
		found = true
		break
	}
	if !found {
		meta, err := challengeMetadataURL(ctx, c, mcpURL)
		if err != nil {
			errs = append(errs, err)
			return "", errors.Join(errs...)
		}
		if err := getJSON(ctx, c, meta, &prm); err != nil {
			return "", err
		}
	}
	if len(prm.AuthorizationServers) == 0 {
		return "", errors.New("protected-resource metadata lists no authorization_servers")
	}
	return authServerTokenURL(ctx, c, prm.AuthorizationServers[0])
}

// challengeMetadataURL sends an unauthenticated request to mcpURL and
// returns the resource_metadata parameter of the 401's WWW-Authenticate.
func challengeMetadataURL(ctx context.Context, c *http.Client, mcpURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, mcpURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBytes))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return "", fmt.Errorf("GET %s without a token: status %d, not 401 with resource_metadata", mcpURL, resp.StatusCode)
	}
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", fmt.Errorf("GET %s: WWW-Authenticate: %w", mcpURL, err)
	}
	for _, ch := range challenges {
		if m := ch.Params["resource_metadata"]; m != "" {
			return m, nil
		}
	}
	return "", fmt.Errorf("GET %s: 401 without a resource_metadata parameter in WWW-Authenticate", mcpURL)
}

// authServerTokenURL reads the token_endpoint of the authorization server
// issuer (RFC 8414 §3, with OpenID Connect discovery as fallback).
func authServerTokenURL(ctx context.Context, c *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("authorization server %q is not an absolute URL", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimRight(u.Path, "/")
	candidates := []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
	}
	if p != "" {
		candidates = append(candidates, origin+p+"/.well-known/openid-configuration")
	}
	var errs []error
	for _, cand := range candidates {
		var asm struct {
			TokenEndpoint string `json:"token_endpoint"`
		}
		if err := getJSON(ctx, c, cand, &asm); err != nil {
			errs = append(errs, err)
			continue
		}
		if asm.TokenEndpoint == "" {
			errs = append(errs, fmt.Errorf("%s has no token_endpoint", cand))
			continue
		}
		return asm.TokenEndpoint, nil
	}
	return "", errors.Join(errs...)
}

// getJSON decodes the JSON document at u into v.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBytes))
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: decode: %w", u, err)
	}
	return nil
}
