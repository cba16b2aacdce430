package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// The agent's link (ADR 33) is the front's alone since the runner's Node no longer opens it
// (ADR 47): these cases were the Node's (agent-link.test.ts).

func TestAgentLinkSaysTheTokenFirstAndLeavesTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.sock")
	listener, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	heard := make(chan string, 1)
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			heard <- err.Error()
			return
		}
		defer conn.Close()
		reader := bufio.NewReader(conn)
		token, _ := reader.ReadString('\n')
		request, _ := reader.ReadString('\n')
		heard <- token + request
	}()
	t.Setenv(linkSocketEnv, path)
	t.Setenv(linkTokenEnv, "t0ken")
	link, err := agentLink()
	if err != nil || link == nil {
		t.Fatalf("agentLink: %v %v", link, err)
	}
	defer link.Close()
	if _, err := link.Write([]byte(`{"id":1,"op":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-heard; got != "t0ken\n"+`{"id":1,"op":"ping"}`+"\n" {
		t.Fatalf("the agent heard %q", got)
	}
	// No run, nor the Node, inherits them.
	for _, name := range []string{linkSocketEnv, linkTokenEnv} {
		if _, set := os.LookupEnv(name); set {
			t.Fatalf("%s is still in the environment", name)
		}
	}
}

func TestAgentLinkWithoutOneOrHalfOne(t *testing.T) {
	t.Setenv(linkSocketEnv, "")
	t.Setenv(linkTokenEnv, "")
	if link, err := agentLink(); link != nil || err != nil {
		t.Fatalf("no link asked for: %v %v", link, err)
	}
	t.Setenv(linkSocketEnv, "/s")
	t.Setenv(linkTokenEnv, "")
	if link, err := agentLink(); link != nil || err != nil {
		t.Fatalf("half a link: %v %v", link, err)
	}
	if _, set := os.LookupEnv(linkSocketEnv); set {
		t.Fatal("half a link stays in the environment")
	}
}

func TestAgentLinkOutOfReach(t *testing.T) {
	t.Setenv(linkSocketEnv, filepath.Join(t.TempDir(), "agent.sock"))
	t.Setenv(linkTokenEnv, "t0ken")
	if link, err := agentLink(); link != nil || err == nil {
		t.Fatalf("no agent listens, yet: %v %v", link, err)
	}
}
