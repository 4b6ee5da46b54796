package telemetry

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
)

const cassandraMain = "org.apache.cassandra.service.CassandraDaemon"

// lookalikeEnv makes the test binary a look-alike server process: run as
// "java ... CassandraDaemon", it listens on 127.0.0.1 when the variable is
// "listen" (and prints its port), or only waits; it exits when its stdin
// closes (the test ended, or died).
const lookalikeEnv = "YCSBCTL_TELEMETRY_LOOKALIKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(lookalikeEnv); mode != "" {
		if mode == "listen" {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				fmt.Println("listen:", err)
				os.Exit(1)
			}
			fmt.Println(l.Addr().(*net.TCPAddr).Port)
		} else {
			fmt.Println(0)
		}
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startLookalike starts the test binary as a process named java running
// main; it returns the pid and the port it listens on (0: none).
func startLookalike(t *testing.T, main, mode string) (int, int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	java := filepath.Join(t.TempDir(), "java")
	require.NoError(t, os.Symlink(self, java))
	cmd := exec.Command(java, "-Xmx64m", "-cp", "lib/*", main)
	cmd.Env = append(os.Environ(), lookalikeEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the look-alike says its port")
	port, err := strconv.Atoi(line[:len(line)-1])
	require.NoError(t, err, "look-alike: %q", line)
	return cmd.Process.Pid, port
}

// Two JVMs on this host run the same main class (as a one-machine
// cluster's nodes do; a class of this test's own, so that real servers on
// the machine stay out of it); only one listens at the address the adapter
// talks to. The sampler finds that one alone; with no address of the
// adapter on this host (a remote contact point), both, as before.
func TestDiscoveryByListeningPort(t *testing.T) {
	main := "org.ycsbctl.test.LookalikeDaemon" + strconv.Itoa(os.Getpid())
	server, port := startLookalike(t, main, "listen")
	decoy, _ := startLookalike(t, main, "idle")
	find := func(listen ...string) []int {
		procs := []adapters.ServerProcess{{Role: "db", MainClass: main, Listen: listen}}
		s, err := Start(Config{Host: "testhost", DB: "cassandra", Processes: procs})
		require.NoError(t, err)
		defer s.Close()
		return pidsOf(s.found)
	}
	at := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	assert.Equal(t, []int{server}, find(at), "the process listening at %s, not the decoy %d", at, decoy)
	assert.Equal(t, []int{server}, find(net.JoinHostPort("localhost", strconv.Itoa(port))), "localhost is this host")
	assert.ElementsMatch(t, []int{server, decoy}, find("192.0.2.1:"+strconv.Itoa(port)), "no contact point here: the main class decides")
}

// The mapping from listening sockets to processes on a recorded /proc
// (testdata/listen/README).
func TestNarrowOnRecordedProc(t *testing.T) {
	fs, err := procfs.NewFS("testdata/listen")
	require.NoError(t, err)
	all := []adapters.ServerProcess{{Role: "cassandra", MainClass: cassandraMain}, {Role: "hbase-master", MainClass: "org.apache.hadoop.hbase.master.HMaster"}}
	f := &finder{fs: fs, self: -1, patterns: all}
	everyone, err := f.look()
	require.NoError(t, err)
	require.Equal(t, []int{101, 102, 103, 104, 105}, pidsOf(everyone), "by main class alone")

	own := []string{"127.0.0.1", "::1", "10.0.0.5"}
	for _, c := range []struct {
		name   string
		listen map[string][]string
		want   []int
	}{
		{"the node at 127.0.0.1", map[string][]string{"cassandra": {"127.0.0.1:9042"}}, []int{101, 104}},
		{"the node at 127.0.0.2", map[string][]string{"cassandra": {"127.0.0.2:9042"}}, []int{102, 104}},
		{"either contact point", map[string][]string{"cassandra": {"127.0.0.1:9042", "127.0.0.2:9042"}}, []int{101, 102, 104}},
		{"any address: both nodes", map[string][]string{"cassandra": {":9042"}}, []int{101, 102, 104}},
		{"a socket on every address serves each of them", map[string][]string{"hbase-master": {"10.0.0.5:16010"}}, []int{101, 102, 103, 104, 105}},
		{"nobody listens there: the main class decides", map[string][]string{"cassandra": {"127.0.0.1:9999"}}, []int{101, 102, 103, 104, 105}},
		{"not this host: the main class decides", map[string][]string{"cassandra": {"10.9.9.9:9042"}}, []int{101, 102, 103, 104, 105}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ps []adapters.ServerProcess
			for _, p := range all {
				p.Listen = c.listen[p.Role]
				ps = append(ps, p)
			}
			f := &finder{fs: fs, self: -1, patterns: ps, listen: endpointsByRole(ps, own)}
			got, err := f.look()
			require.NoError(t, err)
			assert.Equal(t, c.want, pidsOf(got))
		})
	}
	// HMaster at [::]:16010 serves any address of the host's.
	ps := []adapters.ServerProcess{{Role: "hbase-master", MainClass: "org.apache.hadoop.hbase.master.HMaster", Listen: []string{":16010"}}}
	assert.True(t, serves(fs, 104, listening(fs), localEndpoints(ps[0].Listen, own)))
	assert.False(t, serves(fs, 104, listening(fs), localEndpoints([]string{":16030"}, own)), "another port")
	assert.False(t, serves(fs, 103, listening(fs), localEndpoints([]string{"127.0.0.1:9042"}, own)), "a connection to the port is not listening on it")
	assert.False(t, serves(fs, 105, listening(fs), localEndpoints([]string{"127.0.0.1:9042"}, own)), "unreadable descriptors tell nothing")
}
