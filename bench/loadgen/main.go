// Command loadgen drives the API server for the benchmarks (bench/throughput.py,
// bench/watch_load.py): standard library only, one JSON object on stdout per run.
//
//	loadgen get   -url URL -c 16 -d 10s      GETs on c keep-alive connections
//	loadgen write -url URL -rate 200 -d 60s  ConfigMaps created at a fixed rate
//	loadgen watch -url URL -n 100 -d 75s     n watches; lag of each event
//
// HTTPS targets take -ca, -cert and -key. Every connection is HTTP/1.1, one per worker.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

var (
	target   = flag.String("url", "", "URL to GET, the collection to POST to, or to watch")
	conns    = flag.Int("c", 16, "get: concurrent connections")
	duration = flag.Duration("d", 10*time.Second, "how long to run")
	rate     = flag.Float64("rate", 200, "write: ConfigMaps per second")
	watchers = flag.Int("n", 100, "watch: concurrent watches")
	prefix   = flag.String("prefix", "w", "write: name prefix")
	caFile   = flag.String("ca", "", "CA bundle for HTTPS")
	certFile = flag.String("cert", "", "client certificate for HTTPS")
	keyFile  = flag.String("key", "", "client key for HTTPS")
)

func main() {
	mode := os.Args[1]
	flag.CommandLine.Parse(os.Args[2:])
	var result any
	switch mode {
	case "get":
		result = get()
	case "write":
		result = write()
	case "watch":
		result = watch()
	default:
		fmt.Fprintln(os.Stderr, "loadgen: get, write or watch")
		os.Exit(2)
	}
	json.NewEncoder(os.Stdout).Encode(result)
}

// client is one HTTP/1.1 connection's worth of client (its own transport).
func client() *http.Client {
	transport := &http.Transport{
		MaxIdleConnsPerHost: 1,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	if *caFile != "" {
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(*caFile)
		check(err)
		pool.AppendCertsFromPEM(pem)
		pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		check(err)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
	}
	return &http.Client{Transport: transport}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

type getResult struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
}

func get() getResult {
	var mu sync.Mutex
	var latencies []float64
	var errors atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(*duration)
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			var mine []float64
			for time.Now().Before(end) {
				t := time.Now()
				response, err := c.Get(*target)
				if err == nil {
					_, err = io.Copy(io.Discard, response.Body)
					response.Body.Close()
					if response.StatusCode != 200 {
						err = fmt.Errorf("status %d", response.StatusCode)
					}
				}
				if err != nil {
					errors.Add(1)
					continue
				}
				mine = append(mine, time.Since(t).Seconds()*1000)
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	sort.Float64s(latencies)
	n := len(latencies)
	return getResult{n + int(errors.Load()), int(errors.Load()), elapsed, float64(n) / elapsed,
		percentile(latencies, 0.5), percentile(latencies, 0.99)}
}

type writeResult struct {
	Sent     int     `json:"sent"`
	Created  int     `json:"created"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	Achieved float64 `json:"achieved_rate"`
	Behind   int     `json:"behind"` // ticks on which every writer was busy
}

// write creates ConfigMaps at -rate, each carrying its write time (bench/written, Unix ns).
func write() writeResult {
	jobs := make(chan int, 1)
	var created, errors, behind atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			for seq := range jobs {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-%d",`+
					`"annotations":{"bench/written":"%d"}},"data":{"key":"value"}}`,
					*prefix, seq, time.Now().UnixNano())
				response, err := c.Post(*target, "application/json", bytes.NewBufferString(body))
				if err == nil {
					io.Copy(io.Discard, response.Body)
					response.Body.Close()
				}
				if err != nil || response.StatusCode != 201 {
					errors.Add(1)
				} else {
					created.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / *rate)
	total := int(duration.Seconds() * *rate)
	for seq := range total {
		time.Sleep(time.Until(start.Add(time.Duration(seq) * interval)))
		select {
		case jobs <- seq:
		default:
			behind.Add(1)
			jobs <- seq
		}
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	return writeResult{total, int(created.Load()), int(errors.Load()), elapsed,
		float64(created.Load()) / elapsed, int(behind.Load())}
}

type watcherResult struct {
	Events   int     `json:"events"`   // ConfigMaps seen ADDED, each once
	Received int     `json:"received"` // event lines read, repeats after a resume too
	Resumed  int     `json:"resumed"`  // streams that ended early and were watched again
	P50      float64 `json:"lag_p50_ms"`
	P99      float64 `json:"lag_p99_ms"`
	Max      float64 `json:"lag_max_ms"`
	Error    string  `json:"error,omitempty"` // the first early end's
}

// watch opens -n watches, prints "ready" on stderr once all have their response headers,
// and counts ADDED events for -d; each event's lag is its receive time minus bench/written.
func watch() []watcherResult {
	results := make([]watcherResult, *watchers)
	var ready sync.WaitGroup
	var wg sync.WaitGroup
	end := time.Now().Add(*duration)
	for i := range *watchers {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = watchOne(end, ready.Done)
		}()
	}
	ready.Wait()
	fmt.Fprintln(os.Stderr, "ready")
	wg.Wait()
	return results
}

// watchOne watches until end; a stream that ends early is watched again from the last
// resourceVersion seen, as an informer does, and each ConfigMap is counted once.
func watchOne(end time.Time, ready func()) watcherResult {
	var result watcherResult
	var once sync.Once
	defer once.Do(ready)
	seen := map[string]bool{}
	var lags []float64
	version := ""
	for time.Now().Before(end) {
		url := *target
		if version != "" {
			url += "&resourceVersion=" + version
		}
		c := client()
		c.Timeout = time.Until(end)
		response, err := c.Get(url)
		if err == nil && response.StatusCode != 200 {
			err = fmt.Errorf("status %d", response.StatusCode)
			response.Body.Close()
		}
		if err != nil {
			if result.Error == "" && time.Now().Before(end.Add(-time.Second)) {
				result.Error = err.Error()
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		once.Do(ready)
		version, err = readEvents(response, seen, &lags, &result, version)
		response.Body.Close()
		if time.Now().Before(end.Add(-time.Second)) {
			result.Resumed++
			if result.Error == "" {
				result.Error = fmt.Sprint("stream ended: ", err)
			}
		}
	}
	sort.Float64s(lags)
	result.Events = len(lags)
	result.P50, result.P99 = percentile(lags, 0.5), percentile(lags, 0.99)
	if len(lags) > 0 {
		result.Max = lags[len(lags)-1]
	}
	return result
}

// readEvents reads one watch stream to its end; the last resourceVersion seen.
func readEvents(response *http.Response, seen map[string]bool, lags *[]float64,
	result *watcherResult, version string) (string, error) {
	reader := bufio.NewReaderSize(response.Body, 1<<20)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 {
			now := time.Now().UnixNano()
			var event struct {
				Type   string
				Object struct {
					Metadata struct {
						Name            string
						ResourceVersion string
						Annotations     map[string]string
					}
				}
			}
			if json.Unmarshal(line, &event) == nil {
				result.Received++
				meta := event.Object.Metadata
				if event.Type == "ERROR" {
					return "", fmt.Errorf("error event: %s", line) // 410: watch from now
				}
				if meta.ResourceVersion != "" {
					version = meta.ResourceVersion
				}
				if event.Type == "ADDED" && !seen[meta.Name] {
					seen[meta.Name] = true
					written, _ := strconv.ParseInt(meta.Annotations["bench/written"], 10, 64)
					*lags = append(*lags, float64(now-written)/1e6)
				}
			}
		}
		if err != nil {
			return version, err
		}
	}
}
