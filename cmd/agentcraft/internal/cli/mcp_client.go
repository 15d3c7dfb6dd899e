package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// mcpClientCommands are the MCP client commands: tools lists a server's
// tools, call calls one. Both print JSON on stdout and exit non-zero on
// failure, so that scripts can test MCP servers.
func mcpClientCommands(e *env) []*cobra.Command {
	return []*cobra.Command{mcpToolsCmd(e), mcpCallCmd(e)}
}

// mcpTarget holds the flags that say which server to reach and how.
type mcpTarget struct {
	stdio        string
	bearer       string
	clientID     string
	clientSecret string
	scopes       []string
	tokenURL     string
	timeout      time.Duration
}

func (t *mcpTarget) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&t.stdio, "stdio", "", `run this command as a stdio MCP server instead of connecting to a URL, e.g. "npx -y @modelcontextprotocol/server-everything"`)
	f.StringVar(&t.bearer, "bearer", "", "static bearer token for a URL server")
	f.StringVar(&t.clientID, "client-id", "", "OAuth2 client id (client-credentials grant)")
	f.StringVar(&t.clientSecret, "client-secret", "", "OAuth2 client secret")
	f.StringArrayVar(&t.scopes, "scope", nil, "OAuth2 scope to request (repeatable)")
	f.StringVar(&t.tokenURL, "token-url", "", "OAuth2 token endpoint (default: discovered from the server's metadata)")
	f.DurationVar(&t.timeout, "timeout", 30*time.Second, "how long to wait for the server to connect and answer")
}

// mcpCLIServer names the one server a CLI command connects to.
const mcpCLIServer = "cli"

// server turns the flags and the URL argument (empty with --stdio) into a
// server configuration.
func (t *mcpTarget) server(url string) (mcpclient.ServerConfig, error) {
	cfg := mcpclient.ServerConfig{Name: mcpCLIServer, URL: url, Bearer: t.bearer}
	if t.stdio != "" {
		words, err := splitCommand(t.stdio)
		if err != nil {
			return cfg, fmt.Errorf("--stdio: %w", err)
		}
		if len(words) == 0 {
			return cfg, errors.New("--stdio is empty: give the command that starts the server")
		}
		cfg.Command, cfg.Args = words[0], words[1:]
	}
	if t.clientID != "" || t.clientSecret != "" || len(t.scopes) > 0 || t.tokenURL != "" {
		if t.clientID == "" || t.clientSecret == "" {
			return cfg, errors.New("OAuth needs both --client-id and --client-secret")
		}
		cfg.OAuth = &mcpclient.OAuth{ClientID: t.clientID, ClientSecret: t.clientSecret, Scopes: t.scopes, TokenURL: t.tokenURL}
	}
	if err := mcpclient.ValidateServer(cfg); err != nil {
		_, msg, _ := strings.Cut(err.Error(), ": ")
		return cfg, errors.New(msg)
	}
	return cfg, nil
}

// connect starts a Manager for the server at url (or --stdio) alone and
// fails, with the server's error, when it cannot connect.
func (t *mcpTarget) connect(ctx context.Context, url string) (*mcpclient.Manager, error) {
	cfg, err := t.server(url)
	if err != nil {
		return nil, err
	}
	m, err := mcpclient.New([]mcpclient.ServerConfig{cfg}, &mcpclient.Options{ConnectTimeout: t.timeout, MinBackoff: time.Hour, Version: version()})
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	if st := m.Status()[0]; !st.Connected {
		m.Stop()
		where := cfg.URL
		if cfg.Command != "" {
			where = fmt.Sprintf("%q", t.stdio)
		}
		return nil, fmt.Errorf("connect to MCP server %s: %s", where, st.Error)
	}
	return m, nil
}

func mcpToolsCmd(e *env) *cobra.Command {
	var t mcpTarget
	cmd := &cobra.Command{
		Use:   `tools <url | --stdio "command">`,
		Short: "List the tools of an MCP server as JSON",
		Example: `  agentcraft mcp tools http://localhost:3001/mcp --bearer "$TOKEN"
  agentcraft mcp tools --stdio "npx -y @modelcontextprotocol/server-everything"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			url, rest, err := t.urlArg(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return fmt.Errorf("unexpected arguments %q: give a URL or --stdio", rest)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), t.timeout)
			defer cancel()
			m, err := t.connect(ctx, url)
			if err != nil {
				return err
			}
			defer m.Stop()
			type item struct {
				Name        string          `json:"name"`
				Description string          `json:"description,omitempty"`
				Capability  tool.Capability `json:"capability"`
				InputSchema json.RawMessage `json:"input_schema,omitempty"`
			}
			out := []item{}
			for _, info := range m.List() {
				out = append(out, item{Name: info.MCPName, Description: info.Tool.Description(), Capability: info.Tool.Capability(), InputSchema: info.Tool.Schema()})
			}
			return writeIndented(e, out)
		},
	}
	t.flags(cmd)
	return cmd
}

func mcpCallCmd(e *env) *cobra.Command {
	var t mcpTarget
	cmd := &cobra.Command{
		Use:   `call <url | --stdio "command"> <tool> ['<json arguments>']`,
		Short: "Call a tool of an MCP server and print its result as JSON",
		Long: "Call a tool of an MCP server and print the server's result (content, isError) as JSON.\n" +
			"The exit status is non-zero when the server cannot be reached or the tool reports an error.",
		Example: `  agentcraft mcp call http://localhost:3001/mcp echo '{"message":"hi"}'
  agentcraft mcp call --stdio "npx -y @modelcontextprotocol/server-memory" read_graph`,
		RunE: func(cmd *cobra.Command, args []string) error {
			url, rest, err := t.urlArg(args)
			if err != nil {
				return err
			}
			if len(rest) < 1 || len(rest) > 2 {
				return errors.New(`give the tool name and, optionally, its arguments as a JSON object: call <url | --stdio "command"> <tool> '{"key":"value"}'`)
			}
			name, argsJSON := rest[0], "{}"
			if len(rest) == 2 {
				argsJSON = rest[1]
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(argsJSON), &obj); err != nil || obj == nil {
				return fmt.Errorf("arguments %q are not a JSON object: write them like '{\"message\":\"hi\"}'", argsJSON)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), t.timeout)
			defer cancel()
			m, err := t.connect(ctx, url)
			if err != nil {
				return err
			}
			defer m.Stop()
			res, err := m.CallRaw(ctx, mcpCLIServer, name, json.RawMessage(argsJSON))
			if err != nil {
				return err
			}
			if err := writeIndented(e, res.JSON); err != nil {
				return err
			}
			if res.IsError {
				return fmt.Errorf("tool %s reported an error (isError true in the result above)", name)
			}
			return nil
		},
	}
	t.flags(cmd)
	return cmd
}

// urlArg takes the URL from args unless --stdio is set.
func (t *mcpTarget) urlArg(args []string) (url string, rest []string, err error) {
	if t.stdio != "" {
		return "", args, nil
	}
	if len(args) == 0 {
		return "", nil, errors.New(`give the server's URL (streamable HTTP) or --stdio "command"`)
	}
	return args[0], args[1:], nil
}

// writeIndented prints v as indented JSON.
func writeIndented(e *env, v any) error {
	var b []byte
	var err error
	if raw, ok := v.(json.RawMessage); ok {
		var anyv any
		if err := json.Unmarshal(raw, &anyv); err != nil {
			return err
		}
		v = anyv
	}
	if b, err = json.MarshalIndent(v, "", "  "); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// splitCommand splits a command line into words the way a POSIX shell
// does for the simple cases: blanks separate words, single quotes keep
// everything, double quotes keep all but backslash escapes, a backslash
// escapes the next character. Variables, globs and pipes are not
// interpreted.
func splitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// startMCPClient connects to the MCP servers of cfg.MCP.Servers for the
// platform's agents, waiting at most 10s for the first attempts; servers
// that are down are retried in the background. The caller stops it.
func startMCPClient(ctx context.Context, cfg config.Config, logger *slog.Logger) (*mcpclient.Manager, error) {
	servers := make([]mcpclient.ServerConfig, 0, len(cfg.MCP.Servers))
	for _, s := range cfg.MCP.Servers {
		sc := mcpclient.ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Bearer: s.Bearer}
		if o := s.OAuth; o != nil {
			sc.OAuth = &mcpclient.OAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, TokenURL: o.TokenURL}
		}
		servers = append(servers, sc)
	}
	m, err := mcpclient.New(servers, &mcpclient.Options{Logger: logger, Version: version()})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.Start(sctx); err != nil {
		return nil, err
	}
	return m, nil
}
