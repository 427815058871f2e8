// Command ryw checks read-your-writes across two sidecar instances: each
// writer saves its own theme option through instance A, then reads it back
// through instance B bringing the write's X-WPSidecar-GTID, and counts a
// violation whenever B answers anything older. Reads without the header
// are counted too, to show what the mechanism prevents. It is a test
// tool, not part of the sidecar.
//
//	ryw -a http://127.0.0.1:18091 -b http://127.0.0.1:18092 -user admin -password … -duration 10m
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	a := flag.String("a", "http://127.0.0.1:18091", "instance the writes go to")
	b := flag.String("b", "http://127.0.0.1:18092", "instance the reads go to")
	user := flag.String("user", "admin", "login")
	password := flag.String("password", "", "application password")
	writers := flag.Int("writers", 4, "concurrent writers, each with its own option id w0, w1, …")
	duration := flag.Duration("duration", 10*time.Minute, "how long")
	flag.Parse()

	client := &http.Client{Timeout: 30 * time.Second}
	do := func(method, url, body string, hdr ...string) (int, http.Header, []byte, error) {
		req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
		if err != nil {
			return 0, nil, nil, err
		}
		req.SetBasicAuth(*user, *password)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, got, err
	}
	var writes, reads, violations, staleWithout, failures, noGTID atomic.Int64
	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			for seq := 1; time.Now().Before(deadline); seq++ {
				want := fmt.Sprintf("%s-%d", id, seq)
				code, hdr, body, err := do(http.MethodPost, *a+"/wp-json/themeopts/v1/options", fmt.Sprintf(`{%q:%q}`, id, want))
				if err != nil || code != 200 {
					failures.Add(1)
					log.Printf("write %s: %d %v %s", want, code, err, body)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				writes.Add(1)
				gtid := hdr.Get("X-WPSidecar-GTID")
				if gtid == "" {
					noGTID.Add(1)
				}
				sees := func(h ...string) (bool, error) {
					code, _, body, err := do(http.MethodGet, *b+"/wp-json/themeopts/v1/options", "", h...)
					if err != nil || code != 200 {
						return false, fmt.Errorf("read: %d %v %s", code, err, body)
					}
					var set map[string]any
					if err := json.Unmarshal(body, &set); err != nil {
						return false, err
					}
					return set[id] == want, nil
				}
				if ok, err := sees(); err == nil && !ok {
					staleWithout.Add(1)
				}
				ok, err := sees("X-WPSidecar-GTID", gtid)
				reads.Add(1)
				switch {
				case err != nil:
					failures.Add(1)
					log.Print(err)
				case !ok:
					violations.Add(1)
					log.Printf("violation: %s not seen through B with its GTID %s", want, gtid)
				}
			}
		}(fmt.Sprintf("w%d", w))
	}
	wg.Wait()
	fmt.Printf("read-your-writes over %s, %d writers: %d writes through A, %d reads through B with the write's GTID: %d violations; %d failures; %d writes without a GTID; reads through B without it that missed the write: %d\n",
		*duration, *writers, writes.Load(), reads.Load(), violations.Load(), failures.Load(), noGTID.Load(), staleWithout.Load())
	if violations.Load() > 0 || failures.Load() > 0 || noGTID.Load() > 0 {
		os.Exit(1)
	}
}
