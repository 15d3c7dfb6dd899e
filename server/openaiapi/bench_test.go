package openaiapi_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/gctune"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// gateway is a running agentcraft in front of a fake upstream, with the
// request bodies that reach the same answer both ways.
type gateway struct {
	env    *servertest.Env
	fake   *llmtest.Server
	client *http.Client
}

func newGateway(b *testing.B, turn llmtest.Turn) *gateway {
	b.Helper()
	fake := llmtest.NewOpenAI(b)
	fake.Repeat(turn)
	env := servertest.New(b, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-key"}},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/fake-model"}},
		LogWriter: io.Discard,
		LogLevel:  slog.LevelInfo,
	})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2048, 1024
	b.Cleanup(tr.CloseIdleConnections)
	return &gateway{env: env, fake: fake, client: &http.Client{Transport: tr}}
}

// post sends one chat completion, straight to the fake (direct) or through
// agentcraft, and returns the response; the caller reads and closes it.
func (g *gateway) post(ctx context.Context, direct, stream bool) (*http.Response, error) {
	url, model, key := g.env.URL+"/v1/chat/completions", "helper", g.env.Key
	if direct {
		url, model, key = g.fake.URL+"/v1/chat/completions", "fake-model", "upstream-key"
	}
	body := `{"model":"` + model + `","stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"Hello, how are you?"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	return g.client.Do(req)
}

func (g *gateway) roundTrip(b *testing.B, direct bool) time.Duration {
	start := time.Now()
	resp, err := g.post(context.Background(), direct, false)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("status %d err %v", resp.StatusCode, err)
	}
	return time.Since(start)
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func reportMs(b *testing.B, d time.Duration, unit string) {
	b.ReportMetric(float64(d)/float64(time.Millisecond), unit)
}

// BenchmarkGatewayOverhead measures what agentcraft adds to a chat
// completion compared with sending the same request straight to the
// (fake) provider, in one process on loopback:
//
//   - nonstream/direct and nonstream/agentcraft: latency percentiles and
//     allocations per request each way (agentcraft's allocations are the
//     difference);
//   - nonstream/added: the two interleaved, reporting the added p50/p99;
//   - stream200: 200 concurrent streams, held at 200 (each client opens
//     its next stream when one ends, the first ones started spread over a
//     stream's length, as independent users' are), each 40 chunks/s like
//     a model generating tokens (8000 chunks/s in all), whose chunks the
//     fake stamps with their send time: the added per-chunk delivery
//     latency p50/p99 while all 200 run. Stream starts and ends are part
//     of that load, at the rate 200 concurrent streams have them (400/s);
//   - stream200burst: for information, 200 streams all opened within one
//     chunk interval (25 ms: 8000 new streams/s, twenty times the steady
//     rate), every chunk of them measured: how a sudden crowd of new
//     streams delays the chunks of the others;
//   - idle: the memory one open, idle stream costs agentcraft.
//
// Run (the stream rounds take one to two seconds each, so give them fewer):
//
//	go test -run '^$' -bench 'GatewayOverhead/nonstream' -benchtime 2000x ./server/openaiapi/
//	go test -run '^$' -bench 'GatewayOverhead/(stream200|idle)' -benchtime 4x ./server/openaiapi/
//
// The process's garbage collector is set as `agentcraft serve` sets it
// (server.gc_percent and memory_limit_mib at their defaults; GOGC and
// GOMEMLIMIT in the environment win, so GOGC=100 shows Go's default). The
// client and the fake upstream share the process, so collections here come
// more often than in a gateway on its own; gc-cycles reports how many ran
// during each benchmark's rounds.
func BenchmarkGatewayOverhead(b *testing.B) {
	pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(pct)
	b.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
	set := gctune.Apply(gctune.DefaultGCPercent, 0, os.Getenv)
	b.Logf("collector: GOGC=%d, memory limit %d MiB, from the environment: %v", set.GCPercent, set.MemoryLimit>>20, set.FromEnv)
	answer := llmtest.Turn{Text: "Hello! I am doing well, thank you for asking. How can I help you today?", Usage: llm.Usage{InputTokens: 12, OutputTokens: 18}}

	for _, direct := range []bool{true, false} {
		name := "nonstream/agentcraft"
		if direct {
			name = "nonstream/direct"
		}
		b.Run(name, func(b *testing.B) {
			g := newGateway(b, answer)
			g.roundTrip(b, direct) // warm the connection pools
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				lat = append(lat, g.roundTrip(b, direct))
			}
			reportMs(b, percentile(lat, 0.50), "p50-ms")
			reportMs(b, percentile(lat, 0.99), "p99-ms")
		})
	}

	b.Run("nonstream/added", func(b *testing.B) {
		g := newGateway(b, answer)
		g.roundTrip(b, true)
		g.roundTrip(b, false)
		var direct, via []time.Duration
		for b.Loop() {
			direct = append(direct, g.roundTrip(b, true))
			via = append(via, g.roundTrip(b, false))
		}
		reportMs(b, percentile(direct, 0.50), "direct-p50-ms")
		reportMs(b, percentile(via, 0.50), "via-p50-ms")
		reportMs(b, percentile(via, 0.50)-percentile(direct, 0.50), "added-p50-ms")
		reportMs(b, percentile(via, 0.99)-percentile(direct, 0.99), "added-p99-ms")
	})

	const streams, chunks, pace = 200, 20, 25 * time.Millisecond
	streamBench := func(name string, round func(g *gateway, b *testing.B, direct bool) []time.Duration) {
		b.Run(name, func(b *testing.B) {
			g := newGateway(b, llmtest.Turn{Chunks: make([]string, chunks), Pace: pace, Stamp: true})
			g.burstRound(b, false, streams, pace) // open the connection pools
			var direct, via []time.Duration
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			gc0 := int(ms.NumGC)
			for b.Loop() {
				direct = append(direct, round(g, b, true)...)
				via = append(via, round(g, b, false)...)
			}
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(int(ms.NumGC)-gc0)/float64(b.N), "gc-cycles/op")
			if len(via) < streams*chunks {
				b.Fatalf("received %d stamped chunks through agentcraft, want at least %d", len(via), streams*chunks)
			}
			reportMs(b, percentile(direct, 0.50), "direct-chunk-p50-ms")
			reportMs(b, percentile(direct, 0.99), "direct-chunk-p99-ms")
			reportMs(b, percentile(via, 0.50), "via-chunk-p50-ms")
			reportMs(b, percentile(via, 0.99), "via-chunk-p99-ms")
			reportMs(b, percentile(via, 0.50)-percentile(direct, 0.50), "added-chunk-p50-ms")
			reportMs(b, percentile(via, 0.99)-percentile(direct, 0.99), "added-chunk-p99-ms")
		})
	}
	streamBench("stream200", func(g *gateway, b *testing.B, direct bool) []time.Duration {
		return g.steadyRound(b, direct, streams, chunks, pace)
	})
	streamBench("stream200burst", func(g *gateway, b *testing.B, direct bool) []time.Duration {
		return g.burstRound(b, direct, streams, pace)
	})

	b.Run("idle", func(b *testing.B) {
		const streams = 200
		g := newGateway(b, llmtest.Turn{Text: "first words", Chunks: []string{"first ", "words"}, Fault: &llmtest.Fault{AfterChunks: 1, Stall: time.Hour}})
		var perStream float64
		for b.Loop() {
			direct := g.idleMemory(b, true, streams)
			via := g.idleMemory(b, false, streams)
			perStream = float64(via-direct) / streams
		}
		b.ReportMetric(perStream/1024, "KiB/idle-stream")
	})
}

// burstRound runs n concurrent streams and returns, for every stamped
// chunk, the time from the fake writing it to the client reading it. The
// streams start spread over one pace interval: started in the same
// instant, all n would send their chunks in the same instant too.
func (g *gateway) burstRound(b *testing.B, direct bool, n int, pace time.Duration) []time.Duration {
	return g.clients(b, direct, n, pace, 1, 0, math.MaxInt64)
}

// steadyRound keeps n streams of the given length open: n clients start
// spread over one stream's length and each opens its next stream as soon
// as its last one ends, three streams each. It returns the delivery times
// of the chunks sent while all n clients are busy (from one stream length
// after the start to three), so every measured chunk shares the machine
// with n-1 other streams, including their starts and ends.
func (g *gateway) steadyRound(b *testing.B, direct bool, n, chunks int, pace time.Duration) []time.Duration {
	length := pace * time.Duration(chunks)
	t0 := time.Now()
	return g.clients(b, direct, n, length, 3, t0.Add(length).UnixNano(), t0.Add(3*length).UnixNano())
}

// clients runs n clients, started evenly over spread, each running each
// streams one after the other, and returns the delivery times of the
// stamped chunks sent within [from, to] (Unix nanoseconds).
func (g *gateway) clients(b *testing.B, direct bool, n int, spread time.Duration, each int, from, to int64) []time.Duration {
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(spread * time.Duration(i) / time.Duration(n))
			var local []time.Duration
			for range each {
				local = g.readStream(b, direct, local, from, to)
			}
			mu.Lock()
			out = append(out, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// readStream runs one stream and appends to out the delivery time of each
// stamped chunk sent within [from, to] (Unix nanoseconds).
func (g *gateway) readStream(b *testing.B, direct bool, out []time.Duration, from, to int64) []time.Duration {
	resp, err := g.post(context.Background(), direct, true)
	if err != nil {
		b.Error(err)
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		now := time.Now().UnixNano()
		// The stamp is the content: "content":"<nanos> ". A plain
		// scan keeps the client's own work small, so that it
		// disturbs the measurement as little as possible.
		_, rest, ok := bytes.Cut(data, []byte(`"content":"`))
		if !ok {
			continue
		}
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			continue
		}
		if sent, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil && sent >= from && sent <= to {
			out = append(out, time.Duration(now-sent))
		}
	}
	return out
}

// idleMemory opens n streams that stall after their first chunk and
// returns the heap and stack in use while they are all open.
func (g *gateway) idleMemory(b *testing.B, direct bool, n int) uint64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var open sync.WaitGroup
	open.Add(n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := g.post(ctx, direct, true)
			if err != nil {
				open.Done()
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			first := true
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					if first {
						open.Done()
					}
					return
				}
				if first && bytes.Contains(line, []byte("first")) {
					first = false
					open.Done()
				}
			}
		}()
	}
	open.Wait()
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	cancel()
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for g.fake.Active() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return ms.HeapInuse + ms.StackInuse
}
