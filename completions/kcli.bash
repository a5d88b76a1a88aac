_kcli() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kcli"
                ;;
            kcli,acls)
                cmd="kcli__subcmd__acls"
                ;;
            kcli,assign)
                cmd="kcli__subcmd__assign"
                ;;
            kcli,completions)
                cmd="kcli__subcmd__completions"
                ;;
            kcli,describe-cluster)
                cmd="kcli__subcmd__describe__subcmd__cluster"
                ;;
            kcli,dump-segment)
                cmd="kcli__subcmd__dump__subcmd__segment"
                ;;
            kcli,help)
                cmd="kcli__subcmd__help"
                ;;
            kcli,rebuild-index)
                cmd="kcli__subcmd__rebuild__subcmd__index"
                ;;
            kcli,serve)
                cmd="kcli__subcmd__serve"
                ;;
            kcli,users)
                cmd="kcli__subcmd__users"
                ;;
            kcli__subcmd__acls,add)
                cmd="kcli__subcmd__acls__subcmd__add"
                ;;
            kcli__subcmd__acls,help)
                cmd="kcli__subcmd__acls__subcmd__help"
                ;;
            kcli__subcmd__acls,list)
                cmd="kcli__subcmd__acls__subcmd__list"
                ;;
            kcli__subcmd__acls,remove)
                cmd="kcli__subcmd__acls__subcmd__remove"
                ;;
            kcli__subcmd__acls__subcmd__help,add)
                cmd="kcli__subcmd__acls__subcmd__help__subcmd__add"
                ;;
            kcli__subcmd__acls__subcmd__help,help)
                cmd="kcli__subcmd__acls__subcmd__help__subcmd__help"
                ;;
            kcli__subcmd__acls__subcmd__help,list)
                cmd="kcli__subcmd__acls__subcmd__help__subcmd__list"
                ;;
            kcli__subcmd__acls__subcmd__help,remove)
                cmd="kcli__subcmd__acls__subcmd__help__subcmd__remove"
                ;;
            kcli__subcmd__help,acls)
                cmd="kcli__subcmd__help__subcmd__acls"
                ;;
            kcli__subcmd__help,assign)
                cmd="kcli__subcmd__help__subcmd__assign"
                ;;
            kcli__subcmd__help,completions)
                cmd="kcli__subcmd__help__subcmd__completions"
                ;;
            kcli__subcmd__help,describe-cluster)
                cmd="kcli__subcmd__help__subcmd__describe__subcmd__cluster"
                ;;
            kcli__subcmd__help,dump-segment)
                cmd="kcli__subcmd__help__subcmd__dump__subcmd__segment"
                ;;
            kcli__subcmd__help,help)
                cmd="kcli__subcmd__help__subcmd__help"
                ;;
            kcli__subcmd__help,rebuild-index)
                cmd="kcli__subcmd__help__subcmd__rebuild__subcmd__index"
                ;;
            kcli__subcmd__help,serve)
                cmd="kcli__subcmd__help__subcmd__serve"
                ;;
            kcli__subcmd__help,users)
                cmd="kcli__subcmd__help__subcmd__users"
                ;;
            kcli__subcmd__help__subcmd__acls,add)
                cmd="kcli__subcmd__help__subcmd__acls__subcmd__add"
                ;;
            kcli__subcmd__help__subcmd__acls,list)
                cmd="kcli__subcmd__help__subcmd__acls__subcmd__list"
                ;;
            kcli__subcmd__help__subcmd__acls,remove)
                cmd="kcli__subcmd__help__subcmd__acls__subcmd__remove"
                ;;
            kcli__subcmd__help__subcmd__users,add)
                cmd="kcli__subcmd__help__subcmd__users__subcmd__add"
                ;;
            kcli__subcmd__help__subcmd__users,list)
                cmd="kcli__subcmd__help__subcmd__users__subcmd__list"
                ;;
            kcli__subcmd__help__subcmd__users,remove)
                cmd="kcli__subcmd__help__subcmd__users__subcmd__remove"
                ;;
            kcli__subcmd__users,add)
                cmd="kcli__subcmd__users__subcmd__add"
                ;;
            kcli__subcmd__users,help)
                cmd="kcli__subcmd__users__subcmd__help"
                ;;
            kcli__subcmd__users,list)
                cmd="kcli__subcmd__users__subcmd__list"
                ;;
            kcli__subcmd__users,remove)
                cmd="kcli__subcmd__users__subcmd__remove"
                ;;
            kcli__subcmd__users__subcmd__help,add)
                cmd="kcli__subcmd__users__subcmd__help__subcmd__add"
                ;;
            kcli__subcmd__users__subcmd__help,help)
                cmd="kcli__subcmd__users__subcmd__help__subcmd__help"
                ;;
            kcli__subcmd__users__subcmd__help,list)
                cmd="kcli__subcmd__users__subcmd__help__subcmd__list"
                ;;
            kcli__subcmd__users__subcmd__help,remove)
                cmd="kcli__subcmd__users__subcmd__help__subcmd__remove"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kcli)
            opts="-h -V --log-format --help --version acls assign completions describe-cluster dump-segment rebuild-index users serve help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls)
            opts="-h -V --log-format --help --version list add remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__add)
            opts="-h -V --topic --group --cluster --transactional-id --resource-pattern-type --allow-principal --deny-principal --operation --host --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resource-pattern-type)
                    COMPREPLY=($(compgen -W "any match literal prefixed" -- "${cur}"))
                    return 0
                    ;;
                --allow-principal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny-principal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --operation)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__help)
            opts="list add remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__list)
            opts="-h -V --topic --group --cluster --transactional-id --resource-pattern-type --principal --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resource-pattern-type)
                    COMPREPLY=($(compgen -W "any match literal prefixed" -- "${cur}"))
                    return 0
                    ;;
                --principal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__acls__subcmd__remove)
            opts="-h -V --topic --group --cluster --transactional-id --resource-pattern-type --allow-principal --deny-principal --operation --host --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resource-pattern-type)
                    COMPREPLY=($(compgen -W "any match literal prefixed" -- "${cur}"))
                    return 0
                    ;;
                --allow-principal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny-principal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --operation)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__assign)
            opts="-h -V --brokers --racks --partitions --replication-factor --rack-aware-mode --start-index --replica-shift --seed --topic --format --zookeeper --bootstrap-server --topics-to-move-json --broker-list --minimize-movement --execute --verify --preserve-throttles --cancel --reassignment-json --additional --throttle --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --brokers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --racks)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partitions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replication-factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rack-aware-mode)
                    COMPREPLY=($(compgen -W "enforced safe disabled" -- "${cur}"))
                    return 0
                    ;;
                --start-index)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replica-shift)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics-to-move-json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --broker-list)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reassignment-json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --throttle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__completions)
            opts="-h -V --log-format --help --version bash zsh fish powershell elvish"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__describe__subcmd__cluster)
            opts="-h -V --zookeeper --data-dir --bootstrap-server --topic --under-replicated --offline --min-isr --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-isr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__dump__subcmd__segment)
            opts="-h -V --deep-iteration --print-data-log --skip-record-metadata --offsets-decoder --transaction-log-decoder --max-bytes --max-message-size --verify-index-only --index-sanity-check --format --summary --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-message-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help)
            opts="acls assign completions describe-cluster dump-segment rebuild-index users serve help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__acls)
            opts="list add remove"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__acls__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__acls__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__acls__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__assign)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__describe__subcmd__cluster)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__dump__subcmd__segment)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__rebuild__subcmd__index)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__users)
            opts="list add remove"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__users__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__users__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__help__subcmd__users__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__rebuild__subcmd__index)
            opts="-h -V --verify --strict --dry-run --index-interval-bytes --truncate-corrupt --format --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__serve)
            opts="-h -V --config --override --zookeeper --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --override)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users)
            opts="-h -V --log-format --help --version list add remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__add)
            opts="-h -V --mechanism --iterations --password-file --password-stdin --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --mechanism)
                    COMPREPLY=($(compgen -W "SCRAM-SHA-256 SCRAM-SHA-512" -- "${cur}"))
                    return 0
                    ;;
                --iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__help)
            opts="list add remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__list)
            opts="-h -V --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kcli__subcmd__users__subcmd__remove)
            opts="-h -V --mechanism --zookeeper --bootstrap-server --format --connection-timeout-ms --log-format --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --mechanism)
                    COMPREPLY=($(compgen -W "SCRAM-SHA-256 SCRAM-SHA-512" -- "${cur}"))
                    return 0
                    ;;
                --zookeeper)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --connection-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kcli -o nosort -o bashdefault -o default kcli
else
    complete -F _kcli -o bashdefault -o default kcli
fi
