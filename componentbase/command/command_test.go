package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"trireme.dev/componentbase/logging"
)

// testOptions stand for a component's: a --config file of "key=value"
// lines holding defaults for --name and --count.
type testOptions struct {
	ConfigFile string
	Name       string
	Count      int
}

func testSpec(ran *testOptions) Spec[*testOptions] {
	return Spec[*testOptions]{
		Name:       "test-component",
		Short:      "A component for tests",
		NewOptions: func() *testOptions { return &testOptions{Name: "default", Count: 1} },
		AddFlags: func(o *testOptions, fs *pflag.FlagSet) {
			fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Config file.")
			fs.StringVar(&o.Name, "name", o.Name, "A name.")
			fs.IntVar(&o.Count, "count", o.Count, "A count.")
		},
		ConfigFile: func(o *testOptions) string { return o.ConfigFile },
		LoadConfig: LoadConfigWith(os.ReadFile, func(data []byte) *testOptions {
			o := &testOptions{Name: "default", Count: 1}
			for _, line := range strings.Fields(string(data)) {
				k, v, _ := strings.Cut(line, "=")
				switch k {
				case "name":
					o.Name = v
				case "count":
					o.Count, _ = strconv.Atoi(v)
				}
			}
			return o
		}),
		Run: func(_ context.Context, o *testOptions) error {
			if o.Name == "fail" {
				return errors.New("told to fail")
			}
			*ran = *o
			return nil
		},
	}
}

func TestExecute(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("name=file\ncount=5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		wantName  string
		wantCount int
		wantErr   string
	}{
		{"defaults", nil, "default", 1, ""},
		{"flags", []string{"--name=flag", "--count=3"}, "flag", 3, ""},
		{"config file", []string{"--config", cfg}, "file", 5, ""},
		{"flags win over the file", []string{"--count=9", "--config", cfg}, "file", 9, ""},
		{"missing config file", []string{"--config", cfg + ".nope"}, "", 0, "no such file"},
		{"unknown flag", []string{"--nope"}, "", 0, "unknown flag"},
		{"stray argument", []string{"extra"}, "", 0, "unknown command"},
		{"run error", []string{"--name=fail"}, "", 0, "told to fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran testOptions
			err := testSpec(&ran).Execute(context.Background(), tt.args, Streams{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ran.Name != tt.wantName || ran.Count != tt.wantCount {
				t.Errorf("ran with name %q count %d, want %q %d", ran.Name, ran.Count, tt.wantName, tt.wantCount)
			}
			resolved, err := testSpec(&ran).Resolve(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if resolved.Name != tt.wantName || resolved.Count != tt.wantCount {
				t.Errorf("Resolve: name %q count %d, want %q %d", resolved.Name, resolved.Count, tt.wantName, tt.wantCount)
			}
		})
	}
}

// loggedOptions stand for a component that asks Execute for validation
// and its logger.
type loggedOptions struct {
	logging.Settings
	Count int
}

func TestExecuteValidatesAndLogs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr []string
	}{
		{"valid", []string{"--log-format=json", "-v=2"}, nil},
		{"bad option", []string{"--count=-1"}, []string{"--count must not be negative"}},
		{"bad log format", []string{"--log-format=xml"}, []string{`--log-format "xml"`}},
		{"every error at once", []string{"--log-format=xml", "-v=-1", "--count=-1"},
			[]string{"--log-format", "-v -1", "--count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotLogger bool
			spec := Spec[*loggedOptions]{
				Name:       "test-component",
				NewOptions: func() *loggedOptions { return &loggedOptions{Settings: logging.Defaults("text")} },
				AddFlags: func(o *loggedOptions, fs *pflag.FlagSet) {
					o.Settings.AddFlags(fs)
					fs.IntVar(&o.Count, "count", o.Count, "A count.")
				},
				Validate: func(o *loggedOptions) []error {
					errs := o.Settings.Validate()
					if o.Count < 0 {
						errs = append(errs, errors.New("--count must not be negative"))
					}
					return errs
				},
				Logging:      func(o *loggedOptions) logging.Settings { return o.Settings },
				TrimWhenIdle: true,
				Run: func(ctx context.Context, o *loggedOptions) error {
					log, err := logr.FromContext(ctx)
					gotLogger = err == nil && log.V(o.Verbosity).Enabled() && !log.V(o.Verbosity+1).Enabled()
					return nil
				},
			}
			// The idle trimmer runs until ctx ends.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := spec.Execute(ctx, tt.args, Streams{})
			if len(tt.wantErr) == 0 {
				if err != nil || !gotLogger {
					t.Fatalf("err = %v, logger at -v in ctx: %v", err, gotLogger)
				}
				return
			}
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	var ran testOptions
	if err := testSpec(&ran).Execute(context.Background(), []string{"--version", "--name=fail"}, Streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Error("--version printed nothing")
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{"success", nil, 0, ""},
		{"failure", errors.New("boom"), 1, "Error: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			if got := exitCode(tt.err, &w); got != tt.wantCode || w.String() != tt.wantOut {
				t.Errorf("exitCode = %d, printed %q; want %d, %q", got, w.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}

// testTree stands for a binary of subcommands: "greet NAME" prints to its
// output stream, "fail" returns an error, and the root has a version.
func testTree() *cobra.Command {
	root := &cobra.Command{Use: "test-cli", Short: "A CLI for tests", Version: "v1.2.3"}
	var loud bool
	greet := &cobra.Command{
		Use:   "greet NAME",
		Short: "Greet NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Context() == nil {
				return errors.New("no context")
			}
			msg := "hello " + args[0]
			if loud {
				msg = strings.ToUpper(msg)
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	greet.Flags().BoolVar(&loud, "loud", false, "Shout.")
	fail := &cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return errors.New("told to fail") }}
	root.AddCommand(greet, fail)
	return root
}

func TestExecuteTree(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantOut string // substring of the output stream
		wantErr string
	}{
		{"subcommand", []string{"greet", "you"}, "hello you\n", ""},
		{"subcommand flag", []string{"greet", "--loud", "you"}, "HELLO YOU\n", ""},
		{"version", []string{"--version"}, "test-cli version v1.2.3\n", ""},
		{"subcommand help", []string{"greet", "--help"}, "Greet NAME", ""},
		{"no args is the root's help, not os.Args", nil, "Available Commands", ""},
		{"subcommand error", []string{"fail"}, "", "told to fail"},
		{"unknown subcommand", []string{"nope"}, "", `unknown command "nope"`},
		{"bad arguments", []string{"greet"}, "", "accepts 1 arg"},
		{"unknown flag", []string{"greet", "--nope", "x"}, "", "unknown flag"},
	}
	// cobra falls back to os.Args when given nil; Execute must not.
	saved := os.Args
	os.Args = []string{"test-cli", "greet", "from-os-args"}
	defer func() { os.Args = saved }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Execute(context.Background(), testTree(), tt.args, Streams{Out: &out, Err: &errOut})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				// Main prints the error once; cobra must print neither it
				// nor the usage.
				if out.Len()+errOut.Len() != 0 {
					t.Errorf("printed %q and %q on error", out.String(), errOut.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output %q, want %q in it", out.String(), tt.wantOut)
			}
		})
	}
}

func TestStreamsOrDiscard(t *testing.T) {
	var out bytes.Buffer
	s := Streams{Out: &out}.OrDiscard()
	if s.Out != &out || s.Err != io.Discard {
		t.Errorf("OrDiscard = %+v", s)
	}
	// A tree run with no streams writes nowhere rather than to the
	// process's own.
	if err := Execute(context.Background(), testTree(), []string{"greet", "x"}, Streams{}); err != nil {
		t.Fatal(err)
	}
}
