// Sends one large JSON body to weft with Go's net/http client and prints what it read.
//
// Usage: go run refusal.go <url> <bytes> <authorization>
// Prints one JSON document: {"status": int, "retry_after": string} or {"error": string}.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	url, authorization := os.Args[1], os.Args[3]
	size, _ := strconv.Atoi(os.Args[2])
	body := append(append([]byte(`{"start": "`), bytes.Repeat([]byte(" "), size-13)...), []byte(`"}`)...)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authorization)
	client := &http.Client{Timeout: 60 * time.Second}
	out := map[string]any{}
	resp, err := client.Do(req)
	if err != nil {
		out["error"] = err.Error()
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out["status"] = resp.StatusCode
		out["retry_after"] = resp.Header.Get("Retry-After")
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
