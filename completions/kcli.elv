
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
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;help'= {
            cand completions 'Print shell completions for kcli to stdout'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;help;completions'= {
        }
        &'kcli;help;help'= {
        }
    ]
    $completions[$command]
}
