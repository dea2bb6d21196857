package faultproxy

import (
	"bytes"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"time"
)

// ServeHTTP forwards r to the target, injecting the fault drawn for it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	delay, fault := p.draw(r)
	if delay > 0 {
		p.counts[Latency].Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	p.counts[fault].Add(1)
	switch fault {
	case ResetBefore:
		reset(w)
		return
	case Error500, Throttle, SlowDown, Conflict409:
		answer(w, r, fault)
		return
	}
	resp, respBody, err := p.forward(r, body)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	if p.cfg.Forwarded != nil {
		p.cfg.Forwarded(r, body, resp.StatusCode)
	}
	if p.cfg.Lose != nil && resp.StatusCode < 300 && IsWrite(r) {
		r.Body = io.NopCloser(bytes.NewReader(body)) // Lose may read it, to learn what was written
		if p.cfg.Lose(r) {
			fault = Error500After
		}
	}
	switch fault {
	case ResetAfter:
		reset(w)
	case Error500After:
		answer(w, r, Error500)
	default:
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(respBody)
	}
}

// dynamoWrites are the DynamoDB operations that change a table's items.
var dynamoWrites = map[string]bool{"UpdateItem": true, "PutItem": true, "DeleteItem": true,
	"TransactWriteItems": true, "BatchWriteItem": true}

// IsWrite reports whether r may change what the server holds: a DynamoDB
// request of a write operation, or any other request but GET, HEAD and
// OPTIONS (S3, GCS, Azure and the nameservice's own routes).
func IsWrite(r *http.Request) bool {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		_, op, _ := strings.Cut(t, ".")
		return dynamoWrites[op]
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// draw picks what the proxy does to r: a delay, and one fault that applies
// to r.
func (p *Proxy) draw(r *http.Request) (delay time.Duration, fault Fault) {
	if !p.enabled.Load() {
		return 0, Pass
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.left > 0 && p.rnd.Float64() < p.cfg.Rates[Latency] {
		p.left--
		delay = time.Duration(1 + p.rnd.Int64N(int64(p.cfg.MaxLatency)))
	}
	x := p.rnd.Float64()
	for _, f := range Faults[1:] {
		if x < p.cfg.Rates[f] {
			if p.left > 0 && applies(f, r) {
				p.left--
				fault = f
			}
			break
		}
		x -= p.cfg.Rates[f]
	}
	return delay, fault
}

// applies reports whether f makes sense for r.
func applies(f Fault, r *http.Request) bool {
	dynamo := r.Header.Get("X-Amz-Target") != ""
	switch f {
	case Throttle:
		return dynamo
	case SlowDown:
		return !dynamo
	case Conflict409:
		return !dynamo && r.Method == http.MethodPut && (r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "")
	}
	return true
}

func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.cfg.Target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host // the client signed the request for the proxy's host
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// answer writes the error response of fault f in the protocol of r:
// DynamoDB's JSON errors or S3's XML ones.
func answer(w http.ResponseWriter, r *http.Request, f Fault) {
	if r.Header.Get("X-Amz-Target") != "" {
		code, typ := 500, "InternalServerError"
		if f == Throttle {
			code, typ = 400, "ProvisionedThroughputExceededException"
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Requestid", "faultproxy")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#`+typ+`","message":"injected by faultproxy"}`)
		return
	}
	code, s3code := 500, "InternalError"
	switch f {
	case SlowDown:
		code, s3code = 503, "SlowDown"
	case Conflict409:
		code, s3code = 409, "ConditionalRequestConflict"
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", "faultproxy")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+
		`<Error><Code>`+s3code+`</Code><Message>injected by faultproxy</Message><RequestId>faultproxy</RequestId></Error>`)
}

// reset closes the client's connection with a TCP reset, without answering.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
