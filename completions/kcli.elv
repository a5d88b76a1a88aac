
use builtin;
use str;

set edit:completion:arg-completer[kcli] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kcli'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kcli'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand completions 'Print shell completions for kcli to stdout'
            cand rebuild-index 'Rebuild or verify the .index and .timeindex files of log segments'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;rebuild-index'= {
            cand --index-interval-bytes 'Bytes of log between index entries: the topic''s `index.interval.bytes`'
            cand --format 'Output format: text (problems, then a summary table) or JSON Lines (one object per segment; docs/rebuild-index.md)'
            cand --verify 'Check the existing indexes against the log without changing anything; exit 1 when an entry is wrong'
            cand --strict 'With --verify: also require the indexes to be byte for byte what a rebuild writes'
            cand --dry-run 'Report what a rebuild would change without writing anything'
            cand --truncate-corrupt 'Cut a segment''s corrupt or torn tail at the end of its valid data, as a broker''s recovery does; without it the tail is only reported'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;help'= {
            cand completions 'Print shell completions for kcli to stdout'
            cand rebuild-index 'Rebuild or verify the .index and .timeindex files of log segments'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;help;completions'= {
        }
        &'kcli;help;rebuild-index'= {
        }
        &'kcli;help;help'= {
        }
    ]
    $completions[$command]
}
