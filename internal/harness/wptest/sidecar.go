package wptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Sidecar is one running instance of the sidecar in front of the site.
// The site's own (Site.URL) is Varnish's backend; StartInstance starts
// more, sharing the database as the instances of a site with several
// replicas do.
type Sidecar struct {
	URL      string
	AdminURL string
	bin      string
	args     []string // without its listeners
	logPath  string
	log      *os.File
	cmd      *exec.Cmd
}

// start runs the instance and waits until it says it is ready; its log
// goes on after what an earlier run of it wrote.
func (c *Sidecar) start() error {
	if c.log == nil {
		f, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		c.log = f
	}
	args := append([]string{"--listen", strings.TrimPrefix(c.URL, "http://"), "--admin-listen", strings.TrimPrefix(c.AdminURL, "http://")}, c.args...)
	c.cmd = exec.Command(c.bin, args...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.Env = []string{} // everything from wp-config.php, nothing from this environment
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		return err
	}
	if err := waitReady(c.AdminURL+"/readyz", 15*time.Second); err != nil {
		return fmt.Errorf("sidecar not ready: %v\n%s", err, c.Log())
	}
	return nil
}

// Kill ends the instance at once, as a crash would: no lame-duck phase,
// nothing handed over.
func (c *Sidecar) Kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// Restart starts a killed or stopped instance again, on its own ports.
func (c *Sidecar) Restart() error { return c.start() }

// Ready is what the instance's /readyz says (nil when it does not
// answer): "leader", "change_feed", ….
func (c *Sidecar) Ready() map[string]string {
	resp, err := http.Get(c.AdminURL + "/readyz")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var st map[string]string
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	return st
}

// Leads tells whether the instance says it leads (/readyz).
func (c *Sidecar) Leads() bool { return c.Ready()["leader"] == "yes" }

// Log is what the instance has logged so far, over all its runs.
func (c *Sidecar) Log() string {
	b, _ := os.ReadFile(c.logPath)
	return string(b)
}

// stop ends the instance as a supervisor would (SIGTERM), killing it if
// it has not ended within 10 s.
func (c *Sidecar) stop() {
	if c.cmd != nil {
		StopProcess(c.cmd)
	}
	if c.log != nil {
		c.log.Close()
	}
}

// StartInstance starts one more sidecar sharing the site: the same
// arguments as the site's own, its own listeners and log. Stop stops it.
func (s *Site) StartInstance() (*Sidecar, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	c := &Sidecar{URL: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), AdminURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), bin: s.Bin, args: s.Sidecar.args,
		logPath: filepath.Join(s.Dir, fmt.Sprintf("sidecar-%d.log", len(s.instances)+2))}
	s.instances = append(s.instances, c)
	return c, c.start()
}

// StopProcess ends a started process as a supervisor would (SIGTERM),
// killing it if it has not ended within 10 s; one that ended already is
// left as it is.
func StopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
