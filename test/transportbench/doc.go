// Package transportbench benchmarks one pod admission through each plugin
// transport, next to an in-process baseline, and reports per-call latency
// percentiles. build/bench-transports.sh runs it and prints the table.
//
//	go test -run '^$' -bench . -benchtime 2s ./test/transportbench/
//
// Rows:
//   - BenchmarkAdmitInProcess: no transport; the request goes through the
//     JSON codec to the SDK's exec handling and back, in the same process.
//     What any plugin costs at least.
//   - BenchmarkAdmitExec: the Exec transport runs the test plugin binary
//     (built with the SDK, --mode=allow) once per call.
//   - BenchmarkAdmitExecMinimal: the Exec transport runs minimalplugin, a
//     stdlib-only Go plugin: the transport and a process without the SDK's
//     packages, to show what the plugin's own start-up costs.
//   - BenchmarkAdmitGRPC: the GRPC transport calls the test plugin running
//     as a daemon (--serve, another process) over a unix socket.
//
// Every benchmark records the duration of each call and reports p50-µs,
// p99-µs and max-µs besides Go's mean (ns/op); allocs/op counts the
// kubelet side only.
package transportbench
