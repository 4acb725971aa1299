// Command linkgen writes the synthetic traces and schedules that
// shapedlink's generators make, so an experiment can name a file that
// anyone can regenerate, and so they can be read and plotted:
//
//	go run ./examples/linkgen -trace cell:10/0.5/1 > results/cell.trace
//	go run ./examples/linkgen -trace const:4 -summary
//	go run ./examples/linkgen -schedule step:10/2/5s/20s > results/step.json
//	go run ./examples/linkgen -schedule blackout:300ms/10s
//
// A trace is written in Mahimahi's format (one delivery opportunity of
// 1500 bytes per line, its time in milliseconds; the last time is the
// period); a schedule as the JSON file shapedlink.LoadSchedule reads.
// -summary prints, instead, the trace's mean rate and its rate in each
// second, or the schedule's changes one per line.
//
// The generators (shapedlink.LoadTrace, shapedlink.LoadSchedule):
//
//	const:MBIT              evenly spaced opportunities for MBIT Mbit/s
//	cell:MBIT/CV[/SEED]     a cellular-like rate: log-normal AR(1) per
//	                        100 ms, coefficient of variation CV, mean MBIT
//	                        over its 60 s period; SEED (default 1) picks
//	                        the sequence, the same on every machine
//	blackout:DUR/EVERY[/hold]  the link down for DUR every EVERY
//	step:HI/LO/DUR/EVERY       the rate at LO for DUR every EVERY
//
// Any of them, or the file this command writes, goes in a profile:
// 80:10,down.trace=cell:10/0.5/1 or 80:10,schedule=results/step.json.
package main
