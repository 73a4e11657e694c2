// Demo worker service (Go): counts the jobs it is handed and reports a running total.
// GET /work?n=<count> adds n jobs; GET /healthz answers ok. Listens on $PORT (default 8090).
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
)

var total int

func add(n int) int {
	total += n
	return total
}

func handle(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil {
		n = 1
	}
	sum := add(n)
	fmt.Fprintf(w, "{\"n\": %d, \"total\": %d}\n", n, sum)
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8090"
	}
	http.HandleFunc("/work", handle)
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	fmt.Printf("worker listening on 127.0.0.1:%s\n", port)
	if err := http.ListenAndServe("127.0.0.1:"+port, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
